#include "t2t/search/shortlist_builder.h"

#include <algorithm>
#include <limits>
#include <string>

#include "t2t/core/error.h"
#include "t2t/text/text_encoder.h"

namespace t2t {
namespace {

// The distinct word ids of a sequence (ids >= the reserved ones, up to EOS).
std::vector<int64_t> distinct_words(const std::vector<int64_t>& ids, int64_t vocab_size) {
  std::vector<int64_t> out;
  for (int64_t id : ids) {
    if (id == kEosId) break;
    if (id >= kNumReservedIds && id < vocab_size) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

ShortlistCounts::ShortlistCounts(int64_t source_vocab_size, int64_t target_vocab_size)
    : source_size_(source_vocab_size),
      target_size_(target_vocab_size),
      target_count_(static_cast<size_t>(std::max<int64_t>(0, target_vocab_size)), 0),
      source_count_(static_cast<size_t>(std::max<int64_t>(0, source_vocab_size)), 0) {
  if (source_vocab_size <= kNumReservedIds || target_vocab_size <= kNumReservedIds)
    throw Error("shortlist counts: vocabularies of " + std::to_string(source_vocab_size) + " and " +
                std::to_string(target_vocab_size) + " ids hold no words");
}

void ShortlistCounts::count_target(const std::vector<int64_t>& target) {
  for (int64_t id : target) {
    if (id == kEosId) break;
    if (id >= kNumReservedIds && id < target_size_) ++target_count_[id];
  }
}

void ShortlistCounts::add(const std::vector<int64_t>& source, const std::vector<int64_t>& target) {
  ++pairs_;
  count_target(target);
  const auto s_words = distinct_words(source, source_size_);
  const auto t_words = distinct_words(target, target_size_);
  for (int64_t s : s_words) {
    ++source_count_[s];
    const uint64_t base = static_cast<uint64_t>(s) * static_cast<uint64_t>(target_size_);
    for (int64_t t : t_words) ++joint_[base + static_cast<uint64_t>(t)];
  }
}

void ShortlistCounts::add_aligned(const std::vector<int64_t>& source,
                                  const std::vector<int64_t>& target,
                                  const std::vector<std::pair<int64_t, int64_t>>& links) {
  ++pairs_;
  count_target(target);
  const auto n_source = static_cast<int64_t>(source.size());
  const auto n_target = static_cast<int64_t>(target.size());
  for (const auto& [i, j] : links) {
    if (i < 0 || j < 0 || i >= n_source || j >= n_target) continue;
    const int64_t s = source[i], t = target[j];
    if (s < kNumReservedIds || t < kNumReservedIds || s >= source_size_ || t >= target_size_)
      continue;
    ++source_count_[s];
    ++joint_[static_cast<uint64_t>(s) * static_cast<uint64_t>(target_size_) +
             static_cast<uint64_t>(t)];
  }
}

LexicalShortlist ShortlistCounts::build(const ShortlistBuildOptions& options) const {
  if (options.best < 1 || options.frequent < 0 || options.min_count < 1)
    throw Error("shortlist: best must be >= 1, frequent >= 0 and min_count >= 1 (got " +
                std::to_string(options.best) + ", " + std::to_string(options.frequent) + ", " +
                std::to_string(options.min_count) + ")");
  LexicalShortlist out(source_size_, target_size_);
  // The most frequent targets, ties to the lower id.
  std::vector<int64_t> order;
  for (int64_t t = kNumReservedIds; t < target_size_; ++t)
    if (target_count_[t] > 0) order.push_back(t);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return target_count_[a] > target_count_[b]; });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(options.frequent)));
  std::vector<char> always(static_cast<size_t>(target_size_), 0);
  std::vector<LexicalShortlist::Target> frequent;
  for (int64_t t : order) {
    always[t] = 1;
    frequent.push_back({t, std::numeric_limits<float>::quiet_NaN()});
  }
  out.set_frequent(std::move(frequent));

  std::vector<std::vector<LexicalShortlist::Target>> by_source(static_cast<size_t>(source_size_));
  for (const auto& [key, count] : joint_) {
    if (static_cast<int64_t>(count) < options.min_count) continue;
    const auto s = static_cast<int64_t>(key / static_cast<uint64_t>(target_size_));
    const auto t = static_cast<int64_t>(key % static_cast<uint64_t>(target_size_));
    if (always[t]) continue;
    by_source[s].push_back(
        {t, static_cast<float>(static_cast<double>(count) / static_cast<double>(source_count_[s]))});
  }
  for (int64_t s = 0; s < source_size_; ++s) {
    auto& list = by_source[s];
    if (list.empty()) continue;
    // Best first; ties to the more frequent target, then the lower id, so
    // that a build does not depend on the hash map's order.
    std::sort(list.begin(), list.end(), [&](const auto& a, const auto& b) {
      if (a.score != b.score) return a.score > b.score;
      if (target_count_[a.id] != target_count_[b.id]) return target_count_[a.id] > target_count_[b.id];
      return a.id < b.id;
    });
    if (static_cast<int64_t>(list.size()) > options.best) list.resize(options.best);
    out.add({s}, std::move(list));
  }
  return out;
}

}  // namespace t2t
