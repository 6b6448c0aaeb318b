#include "t2t/core/fast_math.h"

#include <algorithm>
#include <limits>

namespace t2t {

// Fixed-width partial sums, so that the compiler vectorizes the loop
// without reassociating anything.
T2T_VECTOR_CLONES
MaxExpSum max_exp_sum(const float* x, int64_t n) {
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t v = 0; v < n; ++v) best = std::max(best, x[v]);
  float partial[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int64_t v = 0;
  for (; v + 16 <= n; v += 16)
    for (int j = 0; j < 16; ++j) partial[j] += exp_nonpositive(x[v + j] - best);
  for (; v < n; ++v) partial[v & 15] += exp_nonpositive(x[v] - best);
  float total = 0;
  for (int j = 0; j < 16; ++j) total += partial[j];
  return {best, total};
}

}  // namespace t2t
