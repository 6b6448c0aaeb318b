#include "t2t/search/constrained_beams.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace t2t {

std::vector<int64_t> allocate_beams(const std::vector<float>& scores,
                                    const std::vector<int64_t>& banks, int64_t beam_size) {
  std::vector<int64_t> order;
  for (size_t j = 0; j < scores.size(); ++j)
    if (std::isfinite(scores[j])) order.push_back(static_cast<int64_t>(j));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  // Each candidate's place within its bank, best first.
  std::map<int64_t, int64_t> seen;
  std::vector<int64_t> rank(scores.size(), 0);
  for (int64_t j : order) rank[j] = seen[banks[j]]++;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (rank[a] != rank[b]) return rank[a] < rank[b];
    return banks[a] > banks[b];
  });
  if (static_cast<int64_t>(order.size()) > beam_size) order.resize(beam_size);
  return order;
}

}  // namespace t2t
