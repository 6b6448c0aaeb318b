// Small numeric helpers for hand-written CPU kernels (decoding attention,
// beam candidates, the training loss): an exp that vectorizes, a row's
// log-sum-exp, and per-CPU compiled clones.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

// Compiles a function for AVX-512, x86-64-v3 (AVX2 with FMA) and plain
// x86-64 and picks one at load time, so a portable build still runs the
// vector units. A file using it is compiled with -fno-trapping-math
// (CMakeLists.txt): without it GCC keeps exp_nonpositive's selects as
// branches in the AVX2 clone, and the loop scalar.
// Not under ThreadSanitizer: the loader runs a clone's resolver while it
// relocates libt2t.so, before the sanitizer's runtime has started, and the
// instrumented resolver crashes there (the build is then plain x86-64).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define T2T_VECTOR_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define T2T_VECTOR_CLONES
#endif

namespace t2t {

// exp(x) for x <= 0, within about 1 ulp of expf, with no call or branch the
// compiler cannot vectorize: x = n ln2 + r with |r| <= ln2/2, exp(r) by the
// degree-6 polynomial of Cephes' expf, times 2^n through the exponent bits.
// Below -87 the result is 0 (where expf's is below 2^-125 anyway).
inline float exp_nonpositive(float x) {
  const float clamped = x < -87.0f ? -87.0f : x;
  const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (clamped * 1.44269504088896341f + magic) - magic;
  const float r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.0f ? 0.0f : e * scale;
}

// The largest of x[0, n), n >= 1.
float row_max(const float* x, int64_t n);

// block_max[b] = the largest of block b of kMaxBlock values (the last may
// be shorter; (n + kMaxBlock - 1) / kMaxBlock places); returns the largest
// of all. n >= 1.
constexpr int64_t kMaxBlock = 64;
float block_maxima(const float* x, int64_t n, float* block_max);

// Every version of block_maxima this CPU can run, by name, the one it uses
// first (for tests). block_max may be null.
using BlockMaximaKernel = float (*)(const float* x, int64_t n, float* block_max);
std::vector<std::pair<const char*, BlockMaximaKernel>> block_maxima_kernels();

// x[0, n) as a softmax sees it: its maximum and sum_v exp(x[v] - max), so
// that log-sum-exp = max + log(sum). n >= 1; vectorized (fast_math.cc).
struct MaxExpSum {
  float max;
  float sum;
};
MaxExpSum max_exp_sum(const float* x, int64_t n);

// sum_v exp(x[v] - max) over x[0, n), its maximum known: max_exp_sum's sum.
float exp_sum(const float* x, int64_t n, float max);

}  // namespace t2t
