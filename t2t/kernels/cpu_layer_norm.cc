#include "t2t/kernels/cpu_layer_norm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <cmath>

#include "t2t/kernels/cpu_features.h"
#include "t2t/kernels/fast_math.h"

namespace t2t {
namespace {

// The sum of x[0, n), or of (x - center)^2 with `squares`: 16 lanes, each
// summing every 16th value in order, then the lanes pairwise: an order of
// additions fixed whatever the CPU. (GCC's vector clones of these loops
// keep the lanes in scalar registers; normalize_rows_avx512 below is the
// fast one.)
template <bool squares>
__attribute__((always_inline)) inline float lane_sum(const float* x, int64_t n, float center) {
  float lanes[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) {
      const float d = x[i + j] - center;
      lanes[j] += squares ? d * d : x[i + j];
    }
  for (; i < n; ++i) {
    const float d = x[i] - center;
    lanes[i & 15] += squares ? d * d : x[i];
  }
  for (int width = 8; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j) lanes[j] += lanes[j + width];
  return lanes[0];
}

// Compiled for AVX-512, AVX2 and plain x86-64 (fast_math.h).
T2T_VECTOR_CLONES
void normalize_rows(const float* x, int64_t x_row, float* y, int64_t rows, int64_t n,
                    const float* scale, const float* shift, float epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_row;
    float* out = y + r * n;
    const float mean = lane_sum<false>(in, n, 0.0f) / static_cast<float>(n);
    const float variance = lane_sum<true>(in, n, mean) / static_cast<float>(n);
    const float inverse = 1.0f / std::sqrt(variance + epsilon);
    for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - mean) * inverse * scale[i] + shift[i];
  }
}

using NormalizeRows = void (*)(const float*, int64_t, float*, int64_t, int64_t, const float*,
                               const float*, float);

#ifdef T2T_X86_KERNELS
T2T_INTRINSICS_BEGIN
// The sum of x[0, n) (n a multiple of 64), or of (x - center)^2: four
// registers of 16 lanes over every 64th value in order, then added.
template <bool squares>
__attribute__((target("avx512f"), always_inline)) inline float sum64(const float* x, int64_t n,
                                                                      __m512 center) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  for (int64_t i = 0; i < n; i += 64)
    for (int j = 0; j < 4; ++j) {
      const __m512 v = _mm512_loadu_ps(x + i + 16 * j);
      if constexpr (squares) {
        const __m512 d = _mm512_sub_ps(v, center);
        acc[j] = _mm512_fmadd_ps(d, d, acc[j]);
      } else {
        acc[j] = _mm512_add_ps(acc[j], v);
      }
    }
  return _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

// normalize_rows by hand for widths of 64s: the plain loops' clone keeps
// the 16 lanes in scalar registers. Same formula; the sums in another fixed
// order, so the last bits may differ from the plain version's.
__attribute__((target("avx512f"))) void normalize_rows_avx512(
    const float* x, int64_t x_row, float* y, int64_t rows, int64_t n, const float* scale,
    const float* shift, float epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_row;
    float* out = y + r * n;
    const float mean = sum64<false>(in, n, _mm512_setzero_ps()) / static_cast<float>(n);
    const __m512 center = _mm512_set1_ps(mean);
    const float variance = sum64<true>(in, n, center) / static_cast<float>(n);
    const __m512 inverse = _mm512_set1_ps(1.0f / std::sqrt(variance + epsilon));
    for (int64_t i = 0; i < n; i += 16) {
      const __m512 normal = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(in + i), center), inverse);
      _mm512_storeu_ps(out + i, _mm512_fmadd_ps(normal, _mm512_loadu_ps(scale + i),
                                                _mm512_loadu_ps(shift + i)));
    }
  }
}
T2T_INTRINSICS_END
#endif

NormalizeRows pick_normalize_rows(int64_t n) {
#ifdef T2T_X86_KERNELS
  if (cpu_features().avx512f && n % 64 == 0) return normalize_rows_avx512;
#endif
  return normalize_rows;
}

}  // namespace

bool cpu_layer_norm_usable(const at::Tensor& x, const at::Tensor& weight,
                           const at::Tensor& bias) {
  auto cpu_float = [](const at::Tensor& t) {
    return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat;
  };
  return !at::GradMode::is_enabled() && cpu_float(x) && cpu_float(weight) && cpu_float(bias) &&
         x.dim() >= 1 && weight.dim() == 1 && weight.sizes() == bias.sizes() &&
         x.size(-1) == weight.size(0) && x.size(-1) > 0;
}

at::Tensor cpu_layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                          double epsilon) {
  RECORD_FUNCTION("t2t::cpu_layer_norm", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(cpu_layer_norm_usable(x, weight, bias),
              "cpu_layer_norm: x [..., channels] and weight, bias [channels], float32 on the CPU "
              "without gradients; got ", x.sizes(), " ", x.scalar_type(), ", ", weight.sizes(),
              ", ", bias.sizes());
  const int64_t n = x.size(-1), rows = x.numel() / n;
  const auto input = x.reshape({rows, n});
  const auto in = input.stride(-1) == 1 ? input : input.contiguous();
  const auto scale = weight.contiguous(), shift = bias.contiguous();
  auto y = at::empty(x.sizes(), x.options());
  const float* xp = in.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t x_row = in.stride(0);
  // Rows split between threads only where there are many (an encoder's).
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / n);
  const NormalizeRows normalize = pick_normalize_rows(n);
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    normalize(xp + begin * x_row, x_row, yp + begin * n, end - begin, n, scale.data_ptr<float>(),
              shift.data_ptr<float>(), static_cast<float>(epsilon));
  });
  return y;
}

}  // namespace t2t
