#include "t2t/core/fast_math.h"

#include <algorithm>
#include <limits>

namespace t2t {

// Fixed-width partial sums, so that the compiler vectorizes the loop
// without reassociating anything.
T2T_VECTOR_CLONES
MaxExpSum max_exp_sum(const float* x, int64_t n) {
  // The maximum lane by lane too: a single running max is a chain of
  // dependent scalar instructions, the slowest part of the whole function.
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float lane_max[16] = {kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf,
                        kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf};
  int64_t u = 0;
  for (; u + 16 <= n; u += 16)
    for (int j = 0; j < 16; ++j) lane_max[j] = std::max(lane_max[j], x[u + j]);
  for (; u < n; ++u) lane_max[u & 15] = std::max(lane_max[u & 15], x[u]);
  float best = kNegInf;
  for (int j = 0; j < 16; ++j) best = std::max(best, lane_max[j]);
  return {best, exp_sum(x, n, best)};
}

T2T_VECTOR_CLONES
float exp_sum(const float* x, int64_t n, float max) {
  float partial[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int64_t v = 0;
  for (; v + 16 <= n; v += 16)
    for (int j = 0; j < 16; ++j) partial[j] += exp_nonpositive(x[v + j] - max);
  for (; v < n; ++v) partial[v & 15] += exp_nonpositive(x[v] - max);
  float total = 0;
  for (int j = 0; j < 16; ++j) total += partial[j];
  return total;
}

}  // namespace t2t
