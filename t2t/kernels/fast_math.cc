#include "t2t/kernels/fast_math.h"

#include <algorithm>
#include <limits>

#include "t2t/kernels/cpu_features.h"

namespace t2t {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The blocks of x[v, n) past the vectorized ones (one, shorter than a
// block) folded into block_max[b] and best.
float fold_tail(const float* x, int64_t v, int64_t n, float* block_max, int64_t b, float best) {
  if (v >= n) return best;
  float m = kNegInf;
  for (; v < n; ++v) m = std::max(m, x[v]);
  if (block_max) block_max[b] = m;
  return std::max(best, m);
}

// The maxima by hand on x86: GCC's vectorized clones of the plain loops
// reduce each block's lanes through memory, far slower than a register
// reduction.
#ifdef T2T_X86_KERNELS
T2T_INTRINSICS_BEGIN

__attribute__((target("avx512f"))) float block_maxima_avx512(const float* x, int64_t n,
                                                              float* block_max) {
  static_assert(kMaxBlock == 64, "four 16-lane vectors a block");
  __m512 all = _mm512_set1_ps(kNegInf);
  int64_t b = 0, v = 0;
  for (; v + kMaxBlock <= n; v += kMaxBlock, ++b) {
    const __m512 m =
        _mm512_max_ps(_mm512_max_ps(_mm512_loadu_ps(x + v), _mm512_loadu_ps(x + v + 16)),
                      _mm512_max_ps(_mm512_loadu_ps(x + v + 32), _mm512_loadu_ps(x + v + 48)));
    all = _mm512_max_ps(all, m);
    if (block_max) block_max[b] = _mm512_reduce_max_ps(m);
  }
  return fold_tail(x, v, n, block_max, b, _mm512_reduce_max_ps(all));
}

__attribute__((target("avx2"))) float max8(__m256 m) {
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

__attribute__((target("avx2"))) float block_maxima_avx2(const float* x, int64_t n,
                                                         float* block_max) {
  __m256 all = _mm256_set1_ps(kNegInf);
  int64_t b = 0, v = 0;
  for (; v + kMaxBlock <= n; v += kMaxBlock, ++b) {
    __m256 m = _mm256_loadu_ps(x + v);
    for (int k = 8; k < kMaxBlock; k += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + v + k));
    all = _mm256_max_ps(all, m);
    if (block_max) block_max[b] = max8(m);
  }
  return fold_tail(x, v, n, block_max, b, max8(all));
}
T2T_INTRINSICS_END
#endif

float block_maxima_plain(const float* x, int64_t n, float* block_max) {
  float best = kNegInf;
  int64_t b = 0;
  for (int64_t v = 0; v < n; v += kMaxBlock, ++b) {
    float m = kNegInf;
    for (int64_t j = v; j < std::min(n, v + kMaxBlock); ++j) m = std::max(m, x[j]);
    if (block_max) block_max[b] = m;
    best = std::max(best, m);
  }
  return best;
}

}  // namespace

std::vector<std::pair<const char*, BlockMaximaKernel>> block_maxima_kernels() {
  std::vector<std::pair<const char*, BlockMaximaKernel>> out;
#ifdef T2T_X86_KERNELS
  if (cpu_features().avx512f) out.emplace_back("avx512", block_maxima_avx512);
  if (cpu_features().avx2) out.emplace_back("avx2", block_maxima_avx2);
#endif
  out.emplace_back("plain", block_maxima_plain);
  return out;
}

namespace {

BlockMaximaKernel block_maxima_for_this_cpu() {
  static const BlockMaximaKernel picked = block_maxima_kernels().front().second;
  return picked;
}

}  // namespace

float block_maxima(const float* x, int64_t n, float* block_max) {
  return block_maxima_for_this_cpu()(x, n, block_max);
}

float row_max(const float* x, int64_t n) { return block_maxima_for_this_cpu()(x, n, nullptr); }

MaxExpSum max_exp_sum(const float* x, int64_t n) {
  const float best = row_max(x, n);
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
