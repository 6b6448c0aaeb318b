#include "t2t/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace t2t {

namespace {

using NgramCounts = std::map<std::vector<int64_t>, int64_t>;

NgramCounts count_ngrams(const std::vector<int64_t>& tokens) {
  NgramCounts counts;
  for (int order = 1; order <= BleuStats::kMaxOrder; ++order)
    for (size_t i = 0; i + order <= tokens.size(); ++i)
      ++counts[std::vector<int64_t>(tokens.begin() + i, tokens.begin() + i + order)];
  return counts;
}

}  // namespace

void BleuStats::add(const std::vector<int64_t>& reference,
                    const std::vector<int64_t>& translation) {
  reference_length_ += static_cast<int64_t>(reference.size());
  translation_length_ += static_cast<int64_t>(translation.size());
  const NgramCounts ref = count_ngrams(reference);
  const NgramCounts hyp = count_ngrams(translation);
  for (const auto& [ngram, count] : hyp) {
    possible_[ngram.size() - 1] += count;
    auto it = ref.find(ngram);
    if (it != ref.end()) matches_[ngram.size() - 1] += std::min(count, it->second);
  }
}

double BleuStats::score() const {
  double smooth = 1.0, log_sum = 0.0;
  bool any = false;
  for (int i = 0; i < kMaxOrder; ++i) {
    if (possible_[i] == 0) continue;  // precision 0: left out of the sum
    double p;
    if (matches_[i] > 0) {
      p = static_cast<double>(matches_[i]) / possible_[i];
    } else {
      smooth *= 2;
      p = 1.0 / (smooth * possible_[i]);
    }
    log_sum += std::log(p);
    any = true;
  }
  if (!any) return 0.0;
  const double geo_mean = std::exp(log_sum / kMaxOrder);
  double bp = 1.0;
  if (reference_length_ > 0) {
    const double ratio = static_cast<double>(translation_length_) / reference_length_;
    if (ratio <= 0.0) bp = 0.0;
    else if (ratio < 1.0) bp = std::exp(1.0 - 1.0 / ratio);
  }
  return geo_mean * bp;
}

}  // namespace t2t
