#include "models/vnni_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/panel_prefetch.h"
#include "t2t/core/cpu_features.h"

namespace t2t {
namespace {

constexpr int64_t kVectors = 4;             // registers of 16 int32 outputs a panel
constexpr int64_t kPanel = 16 * kVectors;  // output columns a panel
constexpr int64_t kRows = 6;               // rows a kernel call: 24 accumulators
constexpr int64_t kRowChunk = 128;

}  // namespace

bool vnni_supported() {
  const CpuFeatures& cpu = cpu_features();
  return cpu.avx512f && cpu.avx512bw && cpu.avx512vnni;
}

#ifdef T2T_X86_KERNELS
namespace {

T2T_INTRINSICS_BEGIN

// Row r of x [rows, in] as unsigned 8-bit codes q = round(x / scale) + zero
// (in4 of them, the padding 0), with scale and zero from the row's range
// widened to hold 0, so that 0 has an exact code.
__attribute__((target("avx512f,avx512bw"))) void quantize_row(const float* x, int64_t in,
                                                              int64_t in4, uint8_t* q,
                                                              float* scale, int32_t* zero) {
  __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= in; k += 16) {
    const __m512 v = _mm512_loadu_ps(x + k);
    lo = _mm512_min_ps(lo, v);
    hi = _mm512_max_ps(hi, v);
  }
  float low = _mm512_reduce_min_ps(lo), high = _mm512_reduce_max_ps(hi);
  for (; k < in; ++k) {
    low = std::min(low, x[k]);
    high = std::max(high, x[k]);
  }
  const float s = high > low ? (high - low) / 255.0f : 1.0f;
  const int32_t z = std::clamp(static_cast<int32_t>(std::nearbyint(-low / s)), 0, 255);
  *scale = s;
  *zero = z;
  const float inverse = 1.0f / s;
  const __m512 inv = _mm512_set1_ps(inverse);
  const __m512i zv = _mm512_set1_epi32(z), min_code = _mm512_setzero_si512(),
                max_code = _mm512_set1_epi32(255);
  for (k = 0; k + 16 <= in; k += 16) {
    __m512i c = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + k), inv)), zv);
    c = _mm512_min_epi32(_mm512_max_epi32(c, min_code), max_code);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k), _mm512_cvtepi32_epi8(c));
  }
  for (; k < in; ++k)
    q[k] = static_cast<uint8_t>(
        std::clamp(static_cast<int32_t>(std::nearbyint(x[k] * inverse)) + z, 0, 255));
  for (; k < in4; ++k) q[k] = 0;  // against zero weights
}

// R rows of codes (row stride ldq) times one panel [in4 / 4, kPanel, 4] into
// y (row stride ldy), `cols` of the panel's columns real:
// y = (sum_k q w - zero * sum_k w) * row scale * column scale + bias,
// while `ahead` (PanelPrefetch or NoPrefetch) reads its share of the next
// panel.
template <int R, class Ahead>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnni_rows(
    const uint8_t* q, int64_t ldq, const int8_t* panel, int64_t quads, const int32_t* col_sums,
    const float* col_scales, const float* bias, const float* row_scales, const int32_t* zeros,
    float* y, int64_t ldy, int64_t cols, Ahead ahead) {
  __m512i acc[R][kVectors];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_si512();
  for (int64_t k = 0; k < quads; ++k) {
    ahead.tick();
    __m512i b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = _mm512_loadu_si512(panel + (k * kPanel + 16 * v) * 4);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      int32_t four;
      std::memcpy(&four, q + r * ldq + 4 * k, sizeof four);
      const __m512i a = _mm512_set1_epi32(four);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], a, b[v]);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    const int64_t first = 16 * v;
    const int64_t n = std::clamp<int64_t>(cols - first, 0, 16);
    if (n == 0) break;
    const __mmask16 mask = n == 16 ? 0xffff : static_cast<__mmask16>((1u << n) - 1);
    const __m512i sums = _mm512_loadu_si512(col_sums + first);
    const __m512 scales = _mm512_loadu_ps(col_scales + first);
    const __m512 b = _mm512_loadu_ps(bias + first);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512i zero = _mm512_set1_epi32(zeros[r]);
      const __m512 value = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][v], _mm512_mullo_epi32(zero, sums)));
      _mm512_mask_storeu_ps(y + r * ldy + first, mask,
                            _mm512_fmadd_ps(value, _mm512_mul_ps(_mm512_set1_ps(row_scales[r]), scales), b));
    }
  }
}
T2T_INTRINSICS_END

template <class Ahead>
using VnniRows = void (*)(const uint8_t*, int64_t, const int8_t*, int64_t, const int32_t*,
                          const float*, const float*, const float*, const int32_t*, float*, int64_t,
                          int64_t, Ahead);
template <class Ahead>
constexpr VnniRows<Ahead> kVnniRows[kRows + 1] = {
    nullptr,             vnni_rows<1, Ahead>, vnni_rows<2, Ahead>, vnni_rows<3, Ahead>,
    vnni_rows<4, Ahead>, vnni_rows<5, Ahead>, vnni_rows<6, Ahead>};

// The quantized rows `codes` times the panels [begin, end) into y; with
// PanelPrefetch, each panel's calls read the next one ahead.
template <class Ahead>
void vnni_product(const uint8_t* codes, int64_t rows, int64_t in4, const int8_t* panels,
                  int64_t out, const int32_t* sums, const float* scales, const float* bias,
                  const float* row_scales, const int32_t* zeros, float* y, int64_t begin,
                  int64_t end) {
  const int64_t quads = in4 / 4, panel_size = in4 * kPanel;
  for_each_panel_call<Ahead>(
      panels, panel_size, begin, end, rows, kRowChunk, kRows, quads,
      [&](int64_t p, int64_t r, int64_t n, Ahead ahead) {
        const int64_t col = p * kPanel, cols = std::min(kPanel, out - col);
        kVnniRows<Ahead>[n](codes + r * in4, in4, panels + p * panel_size, quads, sums + col,
                            scales + col, bias + col, row_scales + r, zeros + r,
                            y + r * out + col, out, cols, ahead);
      });
}

}  // namespace
#endif

std::shared_ptr<const VnniWeight> VnniWeight::pack(const Int8Weights& weights,
                                                   const at::Tensor& bias) {
  if (!vnni_supported()) return nullptr;
  const at::Tensor v = weights.values.contiguous();
  TORCH_CHECK(v.dim() == 2 && v.scalar_type() == at::kChar && weights.scales.numel() == v.size(0),
              "VnniWeight: int8 [out, in] values with [out] scales expected");
  auto w = std::make_shared<VnniWeight>();
  w->out_ = v.size(0);
  w->in_ = v.size(1);
  w->in4_ = (w->in_ + 3) / 4 * 4;
  const int64_t panels = (w->out_ + kPanel - 1) / kPanel, padded_out = panels * kPanel;
  const int64_t in = w->in_, quads = w->in4_ / 4;
  // [out, in] -> [panels, in4 / 4, kPanel, 4], zero where padded, written in
  // one pass with each column's sum: no temporary the size of the matrix,
  // which a model packing its layers one after another would leave behind
  // in the allocator.
  w->panels_ = at::empty({panels, quads, kPanel, 4}, v.options());
  w->col_sums_ = at::empty({padded_out}, at::kInt);
  const int8_t* src = v.data_ptr<int8_t>();
  int8_t* dst = w->panels_.data_ptr<int8_t>();
  int32_t* sums = w->col_sums_.data_ptr<int32_t>();
  // Every thread a share of the columns: loading a model is mostly this.
  at::parallel_for(0, padded_out, kPanel, [&](int64_t begin, int64_t end) {
  for (int64_t col = begin; col < end; ++col) {
    int8_t* out = dst + (col / kPanel * quads * kPanel + col % kPanel) * 4;
    if (col >= w->out_) {
      for (int64_t q = 0; q < quads; ++q) std::memset(out + q * kPanel * 4, 0, 4);
      sums[col] = 0;
      continue;
    }
    const int8_t* row = src + col * in;
    int32_t sum = 0;
    for (int64_t i = 0; i < in; ++i) sum += row[i];
    sums[col] = sum;
    // Whole quads as 4-byte moves; a last partial one zero-padded.
    const int64_t whole = in / 4;
    for (int64_t q = 0; q < whole; ++q) std::memcpy(out + q * kPanel * 4, row + q * 4, 4);
    if (whole < quads) {
      int8_t last[4] = {0, 0, 0, 0};
      std::memcpy(last, row + whole * 4, static_cast<size_t>(in - whole * 4));
      std::memcpy(out + whole * kPanel * 4, last, 4);
    }
  }
  });
  w->scales_ = at::zeros({padded_out}, at::kFloat);
  w->scales_.narrow(0, 0, w->out_).copy_(weights.scales.to(at::kFloat).reshape({-1}));
  w->bias_ = at::zeros({padded_out}, at::kFloat);
  if (bias.defined()) w->bias_.narrow(0, 0, w->out_).copy_(bias.detach().to(at::kFloat).reshape({-1}));
  w->counted_.set(static_cast<int64_t>(w->panels_.nbytes()));
  return w;
}

at::Tensor VnniWeight::apply(const at::Tensor& x) const {
  RECORD_FUNCTION("t2t::vnni_linear", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(x.dim() == 2 && x.size(1) == in_ && x.scalar_type() == at::kFloat &&
                  x.device().is_cpu() && x.is_contiguous(),
              "VnniWeight: x must be contiguous float32 [rows, ", in_, "], got ", x.sizes());
#ifdef T2T_X86_KERNELS
  const int64_t rows = x.size(0);
  auto y = at::empty({rows, out_}, x.options());
  if (rows == 0) return y;
  std::vector<uint8_t> codes(static_cast<size_t>(rows * in4_));
  std::vector<float> row_scales(rows);
  std::vector<int32_t> zeros(rows);
  const float* xp = x.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r)
    quantize_row(xp + r * in_, in_, in4_, codes.data() + r * in4_, &row_scales[r], &zeros[r]);
  const int64_t panels = panels_.size(0);
  const int8_t* wp = panels_.data_ptr<int8_t>();
  const int32_t* sums = col_sums_.data_ptr<int32_t>();
  const float* scales = scales_.data_ptr<float>();
  const float* bias = bias_.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t per_panel = rows * in4_ * kPanel;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 21) / std::max<int64_t>(1, per_panel));
  const bool ahead = read_ahead();
  at::parallel_for(0, panels, grain, [&](int64_t begin, int64_t end) {
    if (ahead)
      vnni_product<PanelPrefetch>(codes.data(), rows, in4_, wp, out_, sums, scales, bias,
                                  row_scales.data(), zeros.data(), yp, begin, end);
    else
      vnni_product<NoPrefetch>(codes.data(), rows, in4_, wp, out_, sums, scales, bias,
                               row_scales.data(), zeros.data(), yp, begin, end);
  });
  return y;
#else
  TORCH_CHECK(false, "VnniWeight: no kernel");
#endif
}

}  // namespace t2t
