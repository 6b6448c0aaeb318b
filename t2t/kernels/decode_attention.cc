#include "t2t/kernels/decode_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/kernels/cpu_features.h"
#include "t2t/kernels/fast_math.h"

namespace t2t {
namespace {

// scores[0, n) -> exp(score - best), their sum's inverse returned: the
// softmax's weights before normalizing.
__attribute__((always_inline)) inline float exponentiate(float* scores, int64_t n, float best) {
  float total = 0;
  for (int64_t p = 0; p < n; ++p) {
    scores[p] = exp_nonpositive(scores[p] - best);
    total += scores[p];
  }
  return 1.0f / total;
}

// Keys and values are float32, or bfloat16 (an int8 model's caches: half
// the memory) widened here, exactly, to float32: the arithmetic is float32
// either way.
__attribute__((always_inline)) inline float widen(float x) { return x; }
__attribute__((always_inline)) inline float widen(uint16_t bf16) {
  const uint32_t bits = static_cast<uint32_t>(bf16) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// One (row, head) pair: softmax(q·k_p * scale) over the n positions, then
// sum_p w_p v_p into out (zeroed by the caller); scores has room for n
// floats. Plain loops with fixed-width partial sums and no calls, which the
// compiler vectorizes without reassociating anything.
template <typename T>
__attribute__((always_inline)) inline void attend_pair_loops(
    const float* q, const T* const* keys, const T* const* values, int64_t n, int64_t depth,
    int64_t value_depth, float scale, float* scores, float* out) {
  if (n == 0) return;
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t p = 0; p < n; ++p) {
    const T* k = keys[p];
    float acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 16 <= depth; i += 16)
      for (int j = 0; j < 16; ++j) acc[j] += q[i + j] * widen(k[i + j]);
    for (; i < depth; ++i) acc[i & 15] += q[i] * widen(k[i]);
    float sum = 0;
    for (int j = 0; j < 16; ++j) sum += acc[j];
    scores[p] = sum * scale;
    best = std::max(best, scores[p]);
  }
  const float norm = exponentiate(scores, n, best);
  for (int64_t p = 0; p < n; ++p) {
    const float w = scores[p] * norm;
    const T* v = values[p];
    for (int64_t i = 0; i < value_depth; ++i) out[i] += w * widen(v[i]);
  }
}

// Compiled for AVX-512, AVX2 and plain x86-64 (fast_math.h).
T2T_VECTOR_CLONES
void attend_pair(const float* q, const float* const* keys, const float* const* values, int64_t n,
                 int64_t depth, int64_t value_depth, float scale, float* scores, float* out) {
  attend_pair_loops(q, keys, values, n, depth, value_depth, scale, scores, out);
}
T2T_VECTOR_CLONES
void attend_pair(const float* q, const uint16_t* const* keys, const uint16_t* const* values,
                 int64_t n, int64_t depth, int64_t value_depth, float scale, float* scores,
                 float* out) {
  attend_pair_loops(q, keys, values, n, depth, value_depth, scale, scores, out);
}

// store_position into a bfloat16 cache: each (row, head)'s `depth` floats
// rounded to nearest even (NaN to a quiet NaN), as LibTorch converts. One
// call for the whole step, so that the conversion's loop is vectorized
// without a call per head.
T2T_VECTOR_CLONES
void store_bf16(const float* from, int64_t row_stride, int64_t head_stride, uint16_t* to,
                int64_t rows, int64_t heads, int64_t capacity, int64_t position, int64_t depth) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h) {
      const float* src = from + r * row_stride + h * head_stride;
      uint16_t* dst = to + ((r * heads + h) * capacity + position) * depth;
      for (int64_t i = 0; i < depth; ++i) {
        uint32_t bits;
        std::memcpy(&bits, src + i, sizeof bits);
        const uint32_t rounded = (bits + 0x7FFFu + (bits >> 16 & 1u)) >> 16;
        dst[i] = src[i] != src[i] ? uint16_t{0x7FC0} : static_cast<uint16_t>(rounded);
      }
    }
}

template <typename T>
using AttendPair = void (*)(const float*, const T* const*, const T* const*, int64_t, int64_t,
                            int64_t, float, float*, float*);

#ifdef T2T_X86_KERNELS
T2T_INTRINSICS_BEGIN
// Every position's key and value asked for at once, before a vector
// kernel reads them: a row's history is scattered over the caches and mostly
// out of the core's caches, and the kernel would otherwise wait on each in
// turn (half the AVX-512 kernel's time on base, in the loads).
template <typename T>
__attribute__((always_inline)) inline void ask_for_history(const T* const* keys,
                                                           const T* const* values, int64_t n,
                                                           int64_t depth, int64_t value_depth) {
  const int64_t key_bytes = depth * static_cast<int64_t>(sizeof(T));
  const int64_t value_bytes = value_depth * static_cast<int64_t>(sizeof(T));
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t b = 0; b < key_bytes; b += 64)
      _mm_prefetch(reinterpret_cast<const char*>(keys[p]) + b, _MM_HINT_T0);
    for (int64_t b = 0; b < value_bytes; b += 64)
      _mm_prefetch(reinterpret_cast<const char*>(values[p]) + b, _MM_HINT_T0);
  }
}

__attribute__((target("avx512f"), always_inline)) inline __m512 load16(const float* p) {
  return _mm512_loadu_ps(p);
}
__attribute__((target("avx512f"), always_inline)) inline __m512 load16(const uint16_t* p) {
  const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}

constexpr int64_t kMaxValueVectors = 8;  // value depths up to 128 kept in registers

// exp_nonpositive (fast_math.h) on 16 lanes, with the same operations in
// the same order (no fused multiply-add: the scalar one has none), so each
// lane's result is the scalar function's, bit for bit.
__attribute__((target("avx512f"), always_inline)) inline __m512 exp_nonpositive16(__m512 x) {
  const __m512 low = _mm512_set1_ps(-87.0f);
  const __m512 clamped = _mm512_max_ps(low, x);  // x where x is NaN, as the scalar one
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(
      _mm512_add_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(1.44269504088896341f)), magic), magic);
  const __m512 r =
      _mm512_sub_ps(_mm512_sub_ps(clamped, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f))),
                    _mm512_mul_ps(n, _mm512_set1_ps(-2.12194440e-4f)));
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(5.0000001201e-1f));
  const __m512 e = _mm512_add_ps(
      _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(p, r), r), r), _mm512_set1_ps(1.0f));
  const __m512i bits = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23);
  const __mmask16 below = _mm512_cmp_ps_mask(x, low, _CMP_LT_OQ);
  return _mm512_maskz_mul_ps(static_cast<__mmask16>(~below), e, _mm512_castsi512_ps(bits));
}

// The sums of 16 vectors' lanes, lane j holding a[j]'s: the same pairs of
// additions as _mm512_reduce_add_ps (halves, quarters, then within each
// four), so each sum has the same bits, for about three operations a
// vector instead of eight.
__attribute__((target("avx512f"), always_inline)) inline __m512 sum_each16(const __m512* a) {
  __m512 x[8], y[4], z[2];
  for (int i = 0; i < 8; ++i)  // lane j + 8 onto lane j
    x[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44),
                         _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xEE));
  for (int i = 0; i < 4; ++i)  // then j + 4 onto j: a 128-bit block a vector
    y[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], 0xDD));
  for (int i = 0; i < 2; ++i)  // then j + 2 onto j
    z[i] = _mm512_add_ps(_mm512_shuffle_ps(y[2 * i], y[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(y[2 * i], y[2 * i + 1], 0xEE));
  // then 1 onto 0: block b holds vectors b, 4 + b, 8 + b, 12 + b
  const __m512 sums = _mm512_add_ps(_mm512_shuffle_ps(z[0], z[1], 0x88),
                                    _mm512_shuffle_ps(z[0], z[1], 0xDD));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_ps(order, sums);
}

// exponentiate(), 16 scores at a time: the same values, and their sum in
// the same order.
__attribute__((target("avx512f"))) float exponentiate_avx512(float* scores, int64_t n,
                                                             float best) {
  const __m512 top = _mm512_set1_ps(best);
  int64_t p = 0;
  for (; p + 16 <= n; p += 16)
    _mm512_storeu_ps(scores + p,
                     exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(scores + p), top)));
  if (p < n) {
    const __mmask16 rest = static_cast<__mmask16>((1u << (n - p)) - 1);
    _mm512_mask_storeu_ps(
        scores + p, rest,
        exp_nonpositive16(_mm512_sub_ps(_mm512_maskz_loadu_ps(rest, scores + p), top)));
  }
  float total = 0;
  for (p = 0; p < n; ++p) total += scores[p];
  return 1.0f / total;
}

// attend_pair for depths that are multiples of 16, by hand: the plain
// loop's clone sums each score's 16 lanes through memory, one after the
// other, which costs more than the products. The lanes are summed in
// registers here, in a tree: the scores differ from the plain loop's in
// their last bits, as they do between CPUs with and without FMA. Sixteen
// positions' sums are formed together (sum_each16), their exponentials
// sixteen at a time, and every chunk of the output at once, each with the
// same operations in the same order as one at a time.
template <typename T>
__attribute__((target("avx512f"))) void attend_pair_avx512(
    const float* q, const T* const* keys, const T* const* values, int64_t n, int64_t depth,
    int64_t value_depth, float scale, float* scores, float* out) {
  if (n == 0) return;
  ask_for_history(keys, values, n, depth, value_depth);
  __m512 top = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512 scale16 = _mm512_set1_ps(scale);
  for (int64_t p0 = 0; p0 < n; p0 += 16) {
    const int64_t m = std::min<int64_t>(16, n - p0);
    __m512 acc[16];
#pragma GCC unroll 16
    for (int64_t j = 0; j < 16; ++j) {
      if (j >= m) {
        acc[j] = _mm512_setzero_ps();
        continue;
      }
      const T* k = keys[p0 + j];
      acc[j] = _mm512_mul_ps(_mm512_loadu_ps(q), load16(k));
      for (int64_t i = 16; i < depth; i += 16)
        acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), load16(k + i), acc[j]);
    }
    const __mmask16 live = m == 16 ? 0xffff : static_cast<__mmask16>((1u << m) - 1);
    const __m512 block = _mm512_mul_ps(sum_each16(acc), scale16);
    _mm512_mask_storeu_ps(scores + p0, live, block);
    top = _mm512_mask_max_ps(top, live, top, block);
  }
  const float best = _mm512_reduce_max_ps(top);
  const float norm = exponentiate_avx512(scores, n, best);
  if (value_depth <= 16 * kMaxValueVectors) {
    // Every chunk of the output accumulates at once, one position after
    // the other: the same sums in the same order as chunk by chunk, without
    // waiting on each FMA in turn.
    const int64_t chunks = value_depth / 16;
    __m512 o[kMaxValueVectors];
    for (int64_t c = 0; c < chunks; ++c) o[c] = _mm512_loadu_ps(out + 16 * c);
    for (int64_t p = 0; p < n; ++p) {
      const __m512 w = _mm512_set1_ps(scores[p] * norm);
      const T* v = values[p];
#pragma GCC unroll 8
      for (int64_t c = 0; c < kMaxValueVectors; ++c)
        if (c < chunks) o[c] = _mm512_fmadd_ps(w, load16(v + 16 * c), o[c]);
    }
    for (int64_t c = 0; c < chunks; ++c) _mm512_storeu_ps(out + 16 * c, o[c]);
    return;
  }
  for (int64_t i = 0; i < value_depth; i += 16) {
    __m512 o = _mm512_loadu_ps(out + i);
    for (int64_t p = 0; p < n; ++p)
      o = _mm512_fmadd_ps(_mm512_set1_ps(scores[p] * norm), load16(values[p] + i), o);
    _mm512_storeu_ps(out + i, o);
  }
}

// The same kernel for CPUs with AVX2 and FMA but not AVX-512, giving the
// same bits: each 16-lane vector of the AVX-512 kernel is two 8-lane ones
// here, with the same operations lane for lane, and the lanes of a score
// are summed in the same tree.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 load8(const float* p) {
  return _mm256_loadu_ps(p);
}
__attribute__((target("avx2,fma"), always_inline)) inline __m256 load8(const uint16_t* p) {
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
}

// exp_nonpositive16 on 8 lanes.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 exp_nonpositive8(__m256 x) {
  const __m256 low = _mm256_set1_ps(-87.0f);
  const __m256 clamped = _mm256_max_ps(low, x);  // x where x is NaN, as the scalar one
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 n = _mm256_sub_ps(
      _mm256_add_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504088896341f)), magic), magic);
  const __m256 r =
      _mm256_sub_ps(_mm256_sub_ps(clamped, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f))),
                    _mm256_mul_ps(n, _mm256_set1_ps(-2.12194440e-4f)));
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201e-1f));
  const __m256 e = _mm256_add_ps(
      _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, r), r), r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 below = _mm256_cmp_ps(x, low, _CMP_LT_OQ);
  return _mm256_andnot_ps(below, _mm256_mul_ps(e, _mm256_castsi256_ps(bits)));
}

// The sums of 8 vectors' lanes, lane j holding a[j]'s, in sum_each16's
// tree after its first level (lane j + 4 onto j, then j + 2, then 1 onto 0).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 sum_each8(const __m256* a) {
  __m256 x[4], y[2];
  for (int i = 0; i < 4; ++i)  // lane j + 4 onto j: vector 2i in the low half, 2i + 1 the high
    x[i] = _mm256_add_ps(_mm256_permute2f128_ps(a[2 * i], a[2 * i + 1], 0x20),
                         _mm256_permute2f128_ps(a[2 * i], a[2 * i + 1], 0x31));
  for (int i = 0; i < 2; ++i)  // then j + 2 onto j
    y[i] = _mm256_add_ps(_mm256_shuffle_ps(x[2 * i], x[2 * i + 1], 0x44),
                         _mm256_shuffle_ps(x[2 * i], x[2 * i + 1], 0xEE));
  // then 1 onto 0: the low half holds vectors 0, 2, 4, 6, the high 1, 3, 5, 7
  const __m256 sums = _mm256_add_ps(_mm256_shuffle_ps(y[0], y[1], 0x88),
                                    _mm256_shuffle_ps(y[0], y[1], 0xDD));
  return _mm256_permutevar8x32_ps(sums, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// exponentiate(), 8 scores at a time: the same values, and their sum in the
// same order.
__attribute__((target("avx2,fma"))) float exponentiate_avx2(float* scores, int64_t n, float best) {
  const __m256 top = _mm256_set1_ps(best);
  int64_t p = 0;
  for (; p + 8 <= n; p += 8)
    _mm256_storeu_ps(scores + p, exp_nonpositive8(_mm256_sub_ps(_mm256_loadu_ps(scores + p), top)));
  if (p < n) {
    alignas(32) float rest[8] = {};
    std::memcpy(rest, scores + p, static_cast<size_t>(n - p) * sizeof(float));
    _mm256_store_ps(rest, exp_nonpositive8(_mm256_sub_ps(_mm256_load_ps(rest), top)));
    std::memcpy(scores + p, rest, static_cast<size_t>(n - p) * sizeof(float));
  }
  float total = 0;
  for (p = 0; p < n; ++p) total += scores[p];
  return 1.0f / total;
}

constexpr int64_t kMaxValueVectorsAvx2 = 8;  // value depths up to 64 kept in registers

// attend_pair_avx512 for AVX2: depths that are multiples of 16, value depths
// of 8.
template <typename T>
__attribute__((target("avx2,fma"))) void attend_pair_avx2(
    const float* q, const T* const* keys, const T* const* values, int64_t n, int64_t depth,
    int64_t value_depth, float scale, float* scores, float* out) {
  if (n == 0) return;
  ask_for_history(keys, values, n, depth, value_depth);
  const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 top = lowest;
  const __m256 scale8 = _mm256_set1_ps(scale);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t p0 = 0; p0 < n; p0 += 8) {
    const int64_t m = std::min<int64_t>(8, n - p0);
    __m256 acc[8];
#pragma GCC unroll 8
    for (int64_t j = 0; j < 8; ++j) {
      if (j >= m) {
        acc[j] = _mm256_setzero_ps();
        continue;
      }
      // The AVX-512 kernel's 16 lanes as two halves; its first level of
      // the tree (lane j + 8 onto j) is their sum.
      const T* k = keys[p0 + j];
      __m256 lo = _mm256_mul_ps(_mm256_loadu_ps(q), load8(k));
      __m256 hi = _mm256_mul_ps(_mm256_loadu_ps(q + 8), load8(k + 8));
      for (int64_t i = 16; i < depth; i += 16) {
        lo = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(k + i), lo);
        hi = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load8(k + i + 8), hi);
      }
      // Kept apart, so that the compiler cannot fuse a product (depth 16)
      // into this sum: the AVX-512 kernel rounds it first.
      __asm__("" : "+x"(lo), "+x"(hi));
      acc[j] = _mm256_add_ps(lo, hi);
    }
    const __m256 block = _mm256_mul_ps(sum_each8(acc), scale8);
    const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(m)), lane));
    if (m == 8) {
      _mm256_storeu_ps(scores + p0, block);
    } else {
      alignas(32) float part[8];
      _mm256_store_ps(part, block);
      std::memcpy(scores + p0, part, static_cast<size_t>(m) * sizeof(float));
    }
    top = _mm256_max_ps(top, _mm256_blendv_ps(lowest, block, live));
  }
  alignas(32) float tops[8];
  _mm256_store_ps(tops, top);
  float best = tops[0];
  for (int j = 1; j < 8; ++j) best = std::max(best, tops[j]);
  const float norm = exponentiate_avx2(scores, n, best);
  if (value_depth <= 8 * kMaxValueVectorsAvx2) {
    const int64_t chunks = value_depth / 8;
    __m256 o[kMaxValueVectorsAvx2];
    for (int64_t c = 0; c < chunks; ++c) o[c] = _mm256_loadu_ps(out + 8 * c);
    for (int64_t p = 0; p < n; ++p) {
      const __m256 w = _mm256_set1_ps(scores[p] * norm);
      const T* v = values[p];
#pragma GCC unroll 8
      for (int64_t c = 0; c < kMaxValueVectorsAvx2; ++c)
        if (c < chunks) o[c] = _mm256_fmadd_ps(w, load8(v + 8 * c), o[c]);
    }
    for (int64_t c = 0; c < chunks; ++c) _mm256_storeu_ps(out + 8 * c, o[c]);
    return;
  }
  for (int64_t i = 0; i < value_depth; i += 8) {
    __m256 o = _mm256_loadu_ps(out + i);
    for (int64_t p = 0; p < n; ++p)
      o = _mm256_fmadd_ps(_mm256_set1_ps(scores[p] * norm), load8(values[p] + i), o);
    _mm256_storeu_ps(out + i, o);
  }
}
T2T_INTRINSICS_END

#endif

// pin_decode_attention_kernel's choice; "" for the best.
std::atomic<const char*> pinned{""};

// The by-hand version where the CPU, the depths and a pin allow it.
template <typename T>
AttendPair<T> pick_attend_pair(int64_t depth, int64_t value_depth) {
#ifdef T2T_X86_KERNELS
  const auto& cpu = cpu_features();
  const std::string_view pin = pinned.load();
  if ((pin.empty() || pin == "avx512") && cpu.avx512f && depth % 16 == 0 &&
      value_depth % 16 == 0 && depth > 0)
    return attend_pair_avx512<T>;
  if ((pin.empty() || pin == "avx2") && cpu.avx2 && cpu.fma && depth % 16 == 0 &&
      value_depth % 8 == 0 && depth > 0)
    return attend_pair_avx2<T>;
#endif
  return attend_pair;
}

// Keys' and values' elements as the kernels read them: float32, or the
// bits of bfloat16.
template <typename T>
const T* elements(const at::Tensor& t) {
  if constexpr (std::is_same_v<T, float>)
    return t.data_ptr<float>();
  else
    return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
}

void check_cache_types(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                       const char* what) {
  TORCH_CHECK(q.scalar_type() == at::kFloat && keys.scalar_type() == values.scalar_type() &&
                  (keys.scalar_type() == at::kFloat || keys.scalar_type() == at::kBFloat16),
              what, ": q must be float32 and keys and values both float32 or both bfloat16; got ",
              q.scalar_type(), ", ", keys.scalar_type(), ", ", values.scalar_type());
}

void check_last_contiguous(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.stride(-1) == 1 || t.size(-1) == 1, "decode attention: ", name,
              " needs a contiguous last dimension, got strides ", t.strides());
}

// The shared loop over (row, head) pairs. `key_at(row, p)` /
// `value_at(row, p)` give head 0's vectors, which are `key_head` /
// `value_head` elements apart from one head to the next; `visible(row, p)`
// says whether position p counts. A row's positions are looked up once for
// all its heads.
template <typename T, typename KeyAt, typename ValueAt, typename Visible>
at::Tensor attend(const at::Tensor& q, int64_t positions, int64_t value_depth, double scale,
                  KeyAt key_at, ValueAt value_at, int64_t key_head, int64_t value_head,
                  Visible visible) {
  const int64_t rows = q.size(0), heads = q.size(1), depth = q.size(2);
  auto out = at::zeros({rows, heads * value_depth}, q.options());
  const float* qp = q.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t q_row = q.stride(0), q_head = q.stride(1);
  const float s = static_cast<float>(scale);
  // Small problems run on the calling thread: waking the pool costs more.
  const int64_t work = rows * heads * positions * (depth + value_depth);
  const int64_t grain = work < (1 << 16) ? rows * heads : std::max<int64_t>(1, heads);
  const AttendPair<T> pair = pick_attend_pair<T>(depth, value_depth);
  at::parallel_for(0, rows * heads, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(positions));
    std::vector<const T*> k0(static_cast<size_t>(positions)), v0(k0.size()), k(k0.size()),
        v(k0.size());
    int64_t row = -1, n = 0;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = i / heads, h = i % heads;
      if (r != row) {
        row = r;
        n = 0;
        for (int64_t p = 0; p < positions; ++p) {
          if (!visible(r, p)) continue;
          k0[n] = key_at(r, p);
          v0[n] = value_at(r, p);
          ++n;
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        k[j] = k0[j] + h * key_head;
        v[j] = v0[j] + h * value_head;
      }
      pair(qp + r * q_row + h * q_head, k.data(), v.data(), n, depth, value_depth, s,
           scores.data(), op + r * heads * value_depth + h * value_depth);
    }
  });
  return out;
}

// attend() over keys and values of either type: key_offset(row, p) and
// value_offset(row, p) are head 0's vectors' offsets in elements; the
// heads follow at the tensors' head strides (dimension 1).
template <typename KeyOffset, typename ValueOffset, typename Visible>
at::Tensor attend_cache(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                        int64_t positions, double scale, KeyOffset key_offset,
                        ValueOffset value_offset, Visible visible) {
  auto run = [&](auto type) {
    using T = decltype(type);
    const T* kp = elements<T>(keys);
    const T* vp = elements<T>(values);
    return attend<T>(
        q, positions, values.size(3), scale,
        [&](int64_t r, int64_t p) { return kp + key_offset(r, p); },
        [&](int64_t r, int64_t p) { return vp + value_offset(r, p); }, keys.stride(1),
        values.stride(1), visible);
  };
  return keys.scalar_type() == at::kBFloat16 ? run(uint16_t{}) : run(float{});
}

}  // namespace

std::vector<std::string> decode_attention_kernels() {
  std::vector<std::string> out;
#ifdef T2T_X86_KERNELS
  if (cpu_features().avx512f) out.emplace_back("avx512");
  if (cpu_features().avx2 && cpu_features().fma) out.emplace_back("avx2");
#endif
  out.emplace_back("plain");
  return out;
}

void pin_decode_attention_kernel(const std::string& name) {
  // Names from a fixed set, so that the atomic holds a string that lives on.
  static const char* const kNames[] = {"", "avx512", "avx2", "plain"};
  for (const char* known : kNames)
    if (name == known) {
      pinned.store(known);
      return;
    }
  throw Error("pin_decode_attention_kernel: no kernel '" + name +
              "' (one of avx512, avx2, plain, or empty for the best)");
}

bool decode_attention_supported(const at::Tensor& like) {
  return like.device().is_cpu() && like.scalar_type() == at::kFloat;
}

at::Tensor attend_slots(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                        const at::Tensor& slots, int64_t length, double scale) {
  RECORD_FUNCTION("t2t::attend_slots", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(q.dim() == 3 && keys.dim() == 4 && values.dim() == 4 && slots.dim() == 2,
              "attend_slots: q [rows, heads, depth], keys/values [slots, heads, capacity, depth], "
              "slots [rows, length]; got ", q.sizes(), ", ", keys.sizes(), ", ", values.sizes(),
              ", ", slots.sizes());
  TORCH_CHECK(slots.size(0) == q.size(0) && slots.size(1) >= length && keys.size(2) >= length &&
                  keys.size(1) == q.size(1) && keys.size(3) == q.size(2) &&
                  values.size(2) >= length && values.size(0) == keys.size(0),
              "attend_slots: shapes do not fit: q ", q.sizes(), ", keys ", keys.sizes(),
              ", values ", values.sizes(), ", slots ", slots.sizes(), ", length ", length);
  TORCH_CHECK(slots.scalar_type() == at::kLong && slots.is_contiguous(),
              "attend_slots: slots must be contiguous int64");
  for (const auto* t : {&q, &keys, &values}) check_last_contiguous(*t, "q/keys/values");
  check_cache_types(q, keys, values, "attend_slots");
  const int64_t* table = slots.data_ptr<int64_t>();
  const int64_t table_row = slots.size(1), num_slots = keys.size(0);
  const auto ks = keys.strides(), vs = values.strides();
  for (int64_t r = 0; r < slots.size(0); ++r)
    for (int64_t p = 0; p < length; ++p) {
      const int64_t s = table[r * table_row + p];
      TORCH_CHECK(s >= 0 && s < num_slots, "attend_slots: slot ", s, " of row ", r, " position ",
                  p, " is not one of the ", num_slots, " slots");
    }
  auto slot = [&](int64_t r, int64_t p) { return table[r * table_row + p]; };
  return attend_cache(
      q, keys, values, length, scale,
      [&](int64_t r, int64_t p) { return slot(r, p) * ks[0] + p * ks[2]; },
      [&](int64_t r, int64_t p) { return slot(r, p) * vs[0] + p * vs[2]; },
      [](int64_t, int64_t) { return true; });
}

void store_position(const at::Tensor& cache, int64_t position, const at::Tensor& x) {
  TORCH_CHECK(cache.dim() == 4 && x.dim() == 3 && cache.is_contiguous() &&
                  (cache.scalar_type() == at::kFloat || cache.scalar_type() == at::kBFloat16) &&
                  x.scalar_type() == at::kFloat && x.device().is_cpu() && cache.device().is_cpu() &&
                  x.size(0) <= cache.size(0) && x.size(1) == cache.size(1) &&
                  x.size(2) == cache.size(3) && position >= 0 && position < cache.size(2),
              "store_position: x [rows, heads, depth] float32 into a contiguous cache [slots, "
              "heads, capacity, depth] at a position within capacity; got x ", x.sizes(), " ",
              x.scalar_type(), ", cache ", cache.sizes(), " ", cache.scalar_type(),
              ", position ", position);
  check_last_contiguous(x, "x");
  const int64_t rows = x.size(0), heads = x.size(1), depth = x.size(2);
  const int64_t capacity = cache.size(2);
  const float* from = x.data_ptr<float>();
  if (cache.scalar_type() == at::kBFloat16) {
    store_bf16(from, x.stride(0), x.stride(1),
               reinterpret_cast<uint16_t*>(cache.data_ptr<at::BFloat16>()), rows, heads, capacity,
               position, depth);
    return;
  }
  float* to = cache.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      std::memcpy(to + ((r * heads + h) * capacity + position) * depth,
                  from + r * x.stride(0) + h * x.stride(1),
                  static_cast<size_t>(depth) * sizeof(float));
}

at::Tensor attend_memory(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                         const at::Tensor& allowed, int64_t group, double scale) {
  RECORD_FUNCTION("t2t::attend_memory", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(q.dim() == 3 && keys.dim() == 4 && values.dim() == 4 && allowed.dim() == 2,
              "attend_memory: q [rows, heads, depth], keys/values [memory rows, heads, length, "
              "depth], allowed [memory rows, length]; got ", q.sizes(), ", ", keys.sizes(), ", ",
              values.sizes(), ", ", allowed.sizes());
  TORCH_CHECK(group >= 1 && q.size(0) == keys.size(0) * group && keys.size(1) == q.size(1) &&
                  keys.size(3) == q.size(2) && values.sizes().slice(0, 3) == keys.sizes().slice(0, 3) &&
                  allowed.size(0) == keys.size(0) && allowed.size(1) == keys.size(2),
              "attend_memory: shapes do not fit: q ", q.sizes(), ", keys ", keys.sizes(),
              ", values ", values.sizes(), ", allowed ", allowed.sizes(), ", group ", group);
  for (const auto* t : {&q, &keys, &values}) check_last_contiguous(*t, "q/keys/values");
  check_cache_types(q, keys, values, "attend_memory");
  const auto keep = allowed.to(at::kBool).contiguous();
  const bool* kept = keep.data_ptr<bool>();
  const int64_t length = keys.size(2);
  const auto ks = keys.strides(), vs = values.strides();
  return attend_cache(
      q, keys, values, length, scale,
      [&](int64_t r, int64_t p) { return (r / group) * ks[0] + p * ks[2]; },
      [&](int64_t r, int64_t p) { return (r / group) * vs[0] + p * vs[2]; },
      [&](int64_t r, int64_t p) { return kept[(r / group) * length + p]; });
}

}  // namespace t2t
