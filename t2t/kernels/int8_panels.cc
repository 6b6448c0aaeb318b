#include "t2t/kernels/int8_panels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "t2t/kernels/cpu_features.h"
#include "t2t/kernels/panel_prefetch.h"

namespace t2t {
namespace {

// VNNI: a panel is 4 registers of 16 int32 outputs, 6 rows a call (24
// accumulators). AVX2: 2 registers of 8, 4 rows a call (8 accumulators,
// the rest of the 16 registers for the weights, a row's codes and the
// products on their way).
constexpr int64_t kVectors = 4;
constexpr int64_t kPanel = 16 * kVectors;
constexpr int64_t kRows = 6;
constexpr int64_t kAvx2Vectors = 2;
constexpr int64_t kAvx2Panel = 8 * kAvx2Vectors;
constexpr int64_t kAvx2Rows = 4;
constexpr int64_t kRowChunk = 128;

Int8Kernel resolve(Int8Kernel kernel) {
  if (kernel != Int8Kernel::best) return kernel;
  return int8_kernel_runs(Int8Kernel::vnni) ? Int8Kernel::vnni : Int8Kernel::avx2;
}

}  // namespace

bool int8_kernel_runs(Int8Kernel kernel) {
  const CpuFeatures& cpu = cpu_features();
  switch (kernel) {
    case Int8Kernel::vnni:
      return cpu.avx512f && cpu.avx512bw && cpu.avx512vnni;
    case Int8Kernel::avx2:
      return cpu.avx2 && cpu.fma;
    case Int8Kernel::best:
      break;
  }
  return int8_kernel_runs(Int8Kernel::vnni) || int8_kernel_runs(Int8Kernel::avx2);
}

#ifdef T2T_X86_KERNELS
namespace {

T2T_INTRINSICS_BEGIN

// A row of x (`in` values) as unsigned codes q = round(x / scale) + zero
// in [0, max_code] (in4 of them, the padding 0), with scale and zero from
// the row's range widened to hold 0, so that 0 has an exact code. The same
// arithmetic at both widths: only the range's reduction differs in order,
// and min and max do not round.
inline void row_code_scale(float low, float high, int32_t max_code, float* scale, int32_t* zero) {
  const float s = high > low ? (high - low) / static_cast<float>(max_code) : 1.0f;
  *scale = s;
  *zero = std::clamp(static_cast<int32_t>(std::nearbyint(-low / s)), 0, max_code);
}

// The codes of x[k, in) one by one, as the vector loops make them, then
// zeros up to in4 (against zero weights).
inline void code_tail(const float* x, int64_t k, int64_t in, int64_t in4, float inverse, int32_t z,
                      int32_t max_code, uint8_t* q) {
  for (; k < in; ++k)
    q[k] = static_cast<uint8_t>(
        std::clamp(static_cast<int32_t>(std::nearbyint(x[k] * inverse)) + z, 0, max_code));
  for (; k < in4; ++k) q[k] = 0;
}

__attribute__((target("avx512f,avx512bw"))) void quantize_row_avx512(const float* x, int64_t in,
                                                                     int64_t in4, int32_t max_code,
                                                                     uint8_t* q, float* scale,
                                                                     int32_t* zero) {
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
  row_code_scale(low, high, max_code, scale, zero);
  const int32_t z = *zero;
  const float inverse = 1.0f / *scale;
  const __m512 inv = _mm512_set1_ps(inverse);
  const __m512i zv = _mm512_set1_epi32(z), min_code = _mm512_setzero_si512(),
                max_codes = _mm512_set1_epi32(max_code);
  for (k = 0; k + 16 <= in; k += 16) {
    __m512i c = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + k), inv)), zv);
    c = _mm512_min_epi32(_mm512_max_epi32(c, min_code), max_codes);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k), _mm512_cvtepi32_epi8(c));
  }
  code_tail(x, k, in, in4, inverse, z, max_code, q);
}

__attribute__((target("avx2"))) void quantize_row_avx2(const float* x, int64_t in, int64_t in4,
                                                       int32_t max_code, uint8_t* q, float* scale,
                                                       int32_t* zero) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= in; k += 8) {
    const __m256 v = _mm256_loadu_ps(x + k);
    lo = _mm256_min_ps(lo, v);
    hi = _mm256_max_ps(hi, v);
  }
  alignas(32) float los[8], his[8];
  _mm256_store_ps(los, lo);
  _mm256_store_ps(his, hi);
  float low = *std::min_element(los, los + 8), high = *std::max_element(his, his + 8);
  for (; k < in; ++k) {
    low = std::min(low, x[k]);
    high = std::max(high, x[k]);
  }
  row_code_scale(low, high, max_code, scale, zero);
  const int32_t z = *zero;
  const float inverse = 1.0f / *scale;
  const __m256 inv = _mm256_set1_ps(inverse);
  const __m256i zv = _mm256_set1_epi32(z), min_code = _mm256_setzero_si256(),
                max_codes = _mm256_set1_epi32(max_code);
  for (k = 0; k + 8 <= in; k += 8) {
    __m256i c = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + k), inv)), zv);
    c = _mm256_min_epi32(_mm256_max_epi32(c, min_code), max_codes);
    // 8 int32 codes (0-255) -> 8 bytes: pack to 16 bits within each 128-bit
    // lane, then to 8 bits, and take each lane's 4 bytes.
    const __m256i words = _mm256_packus_epi32(c, c);
    const __m256i bytes = _mm256_packus_epi16(words, words);
    const uint32_t first = static_cast<uint32_t>(_mm256_extract_epi32(bytes, 0));
    const uint32_t second = static_cast<uint32_t>(_mm256_extract_epi32(bytes, 4));
    std::memcpy(q + k, &first, 4);
    std::memcpy(q + k + 4, &second, 4);
  }
  code_tail(x, k, in, in4, inverse, z, max_code, q);
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

// The same for AVX2, over a panel [in4 / 4, kAvx2Panel, 4]: each quad of a
// row's codes (at most 127) against 8 columns' quads, `vpmaddubsw` summing
// pairs of products into int16 (at most 2 x 127 x 127, no saturation),
// `vpmaddwd` against ones summing those pairs into int32. The R rows' codes
// come interleaved by quads (`q`: [quads, R, 4], interleave_quads): one
// stream for the broadcasts, as the float32 AVX2 kernel reads its rows.
template <int R, class Ahead>
__attribute__((target("avx2,fma"))) void avx2_rows(
    const uint8_t* q, int64_t, const int8_t* panel, int64_t quads, const int32_t* col_sums,
    const float* col_scales, const float* bias, const float* row_scales, const int32_t* zeros,
    float* y, int64_t ldy, int64_t cols, Ahead ahead) {
  __m256i acc[R][kAvx2Vectors];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2Vectors; ++v) acc[r][v] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
  for (int64_t k = 0; k < quads; ++k) {
    ahead.tick();
    __m256i b[kAvx2Vectors];
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2Vectors; ++v)
      b[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + (k * kAvx2Panel + 8 * v) * 4));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      int32_t four;
      std::memcpy(&four, q + (k * R + r) * 4, sizeof four);
      const __m256i a = _mm256_set1_epi32(four);
#pragma GCC unroll 2
      for (int v = 0; v < kAvx2Vectors; ++v)
        acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b[v]), ones));
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < kAvx2Vectors; ++v) {
    const int64_t first = 8 * v;
    const int64_t n = std::clamp<int64_t>(cols - first, 0, 8);
    if (n == 0) break;
    const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_sums + first));
    const __m256 scales = _mm256_loadu_ps(col_scales + first);
    const __m256 b = _mm256_loadu_ps(bias + first);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256i zero = _mm256_set1_epi32(zeros[r]);
      const __m256 value = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc[r][v], _mm256_mullo_epi32(zero, sums)));
      const __m256 out = _mm256_fmadd_ps(value, _mm256_mul_ps(_mm256_set1_ps(row_scales[r]), scales), b);
      float* to = y + r * ldy + first;
      if (n == 8) {
        _mm256_storeu_ps(to, out);
      } else {
        // Through a buffer: AMD's microcode runs masked stores (vmaskmovps)
        // as dozens of operations.
        alignas(32) float part[8];
        _mm256_store_ps(part, out);
        std::memcpy(to, part, static_cast<size_t>(n) * sizeof(float));
      }
    }
  }
}
T2T_INTRINSICS_END

// One panel kernel for R rows, R from 1 to its row group, for each kernel.
template <class Ahead>
using PanelRows = void (*)(const uint8_t*, int64_t, const int8_t*, int64_t, const int32_t*,
                           const float*, const float*, const float*, const int32_t*, float*,
                           int64_t, int64_t, Ahead);
template <class Ahead>
constexpr PanelRows<Ahead> kVnniCalls[kRows + 1] = {
    nullptr,             vnni_rows<1, Ahead>, vnni_rows<2, Ahead>, vnni_rows<3, Ahead>,
    vnni_rows<4, Ahead>, vnni_rows<5, Ahead>, vnni_rows<6, Ahead>};
template <class Ahead>
constexpr PanelRows<Ahead> kAvx2Calls[kAvx2Rows + 1] = {
    nullptr, avx2_rows<1, Ahead>, avx2_rows<2, Ahead>, avx2_rows<3, Ahead>, avx2_rows<4, Ahead>};

// Rows of codes [rows, in4] -> `grouped`, the same size: each row group of
// the AVX2 kernel as [in4 / 4, n, 4], its n rows' quads side by side. The
// groups are for_each_panel_call's: kAvx2Rows rows at a time from the start
// of each chunk of kRowChunk rows, the chunk's last group the rest.
void interleave_quads(const uint8_t* codes, int64_t rows, int64_t in4, uint8_t* grouped) {
  const int64_t quads = in4 / 4;
  for (int64_t c0 = 0; c0 < rows; c0 += kRowChunk) {
    const int64_t chunk_end = std::min(rows, c0 + kRowChunk);
    for (int64_t r0 = c0; r0 < chunk_end; r0 += kAvx2Rows) {
      const int64_t n = std::min(kAvx2Rows, chunk_end - r0);
      uint8_t* to = grouped + r0 * in4;
      for (int64_t r = 0; r < n; ++r)
        for (int64_t k = 0; k < quads; ++k)
          std::memcpy(to + (k * n + r) * 4, codes + (r0 + r) * in4 + 4 * k, 4);
    }
  }
}

// The quantized rows `codes` times the panels [begin, end) of `width`
// columns into y, `group` rows a kernel call; with PanelPrefetch, each
// panel's calls read the next one ahead.
template <class Ahead>
void panel_product(const PanelRows<Ahead>* kernels, int64_t group, int64_t width,
                   const uint8_t* codes, int64_t rows, int64_t in4, const int8_t* panels,
                   int64_t out, const int32_t* sums, const float* scales, const float* bias,
                   const float* row_scales, const int32_t* zeros, float* y, int64_t begin,
                   int64_t end) {
  const int64_t quads = in4 / 4, panel_size = in4 * width;
  for_each_panel_call<Ahead>(
      panels, panel_size, begin, end, rows, kRowChunk, group, quads,
      [&](int64_t p, int64_t r, int64_t n, Ahead ahead) {
        const int64_t col = p * width, cols = std::min(width, out - col);
        kernels[n](codes + r * in4, in4, panels + p * panel_size, quads, sums + col, scales + col,
                   bias + col, row_scales + r, zeros + r, y + r * out + col, out, cols, ahead);
      });
}

}  // namespace
#endif
std::shared_ptr<const Int8PanelWeight> Int8PanelWeight::pack(const Int8Weights& weights,
                                                             const at::Tensor& bias,
                                                             Int8Kernel kernel) {
  kernel = resolve(kernel);
  if (!int8_kernel_runs(kernel)) return nullptr;
  const at::Tensor v = weights.values.contiguous();
  TORCH_CHECK(v.dim() == 2 && v.scalar_type() == at::kChar && weights.scales.numel() == v.size(0),
              "Int8PanelWeight: int8 [out, in] values with [out] scales expected");
  auto w = std::make_shared<Int8PanelWeight>();
  w->kernel_ = kernel;
  w->out_ = v.size(0);
  w->in_ = v.size(1);
  w->in4_ = (w->in_ + 3) / 4 * 4;
  const int64_t width = kernel == Int8Kernel::vnni ? kPanel : kAvx2Panel;
  const int64_t panels = (w->out_ + width - 1) / width, padded_out = panels * width;
  const int64_t in = w->in_, quads = w->in4_ / 4;
  // [out, in] -> [panels, in4 / 4, width, 4], zero where padded, written in
  // one pass with each column's sum: no temporary the size of the matrix,
  // which a model packing its layers one after another would leave behind
  // in the allocator.
  w->panels_ = at::empty({panels, quads, width, 4}, v.options());
  w->col_sums_ = at::empty({padded_out}, at::kInt);
  const int8_t* src = v.data_ptr<int8_t>();
  int8_t* dst = w->panels_.data_ptr<int8_t>();
  int32_t* sums = w->col_sums_.data_ptr<int32_t>();
  // Every thread a share of the columns: loading a model is mostly this.
  at::parallel_for(0, padded_out, kPanel, [&](int64_t begin, int64_t end) {
  for (int64_t col = begin; col < end; ++col) {
    int8_t* out = dst + (col / width * quads * width + col % width) * 4;
    if (col >= w->out_) {
      for (int64_t q = 0; q < quads; ++q) std::memset(out + q * width * 4, 0, 4);
      sums[col] = 0;
      continue;
    }
    const int8_t* row = src + col * in;
    int32_t sum = 0;
    for (int64_t i = 0; i < in; ++i) sum += row[i];
    sums[col] = sum;
    // Whole quads as 4-byte moves; a last partial one zero-padded.
    const int64_t whole = in / 4;
    for (int64_t q = 0; q < whole; ++q) std::memcpy(out + q * width * 4, row + q * 4, 4);
    if (whole < quads) {
      int8_t last[4] = {0, 0, 0, 0};
      std::memcpy(last, row + whole * 4, static_cast<size_t>(in - whole * 4));
      std::memcpy(out + whole * width * 4, last, 4);
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

std::shared_ptr<const Int8PanelWeight> Int8PanelWeight::select_outputs(const at::Tensor& ids) const {
  const at::Tensor index = ids.to(at::kLong).reshape({-1}).contiguous();
  const int64_t n = index.numel();
  TORCH_CHECK(n == 0 || (index.min().item<int64_t>() >= 0 && index.max().item<int64_t>() < out_),
              "Int8PanelWeight::select_outputs: ids must be in [0, ", out_, ")");
  const int64_t width = panels_.size(2), quads = panels_.size(1);
  const int64_t panels = (n + width - 1) / width, padded = panels * width;
  auto w = std::make_shared<Int8PanelWeight>();
  w->kernel_ = kernel_;
  w->out_ = n;
  w->in_ = in_;
  w->in4_ = in4_;
  // [panels, quads, width, 4] -> one row of quads per output -> the chosen
  // rows, zero-padded to whole panels -> back into panels.
  const at::Tensor rows = panels_.permute({0, 2, 1, 3}).reshape({-1, quads, 4});
  at::Tensor chosen = at::zeros({padded, quads, 4}, panels_.options());
  chosen.narrow(0, 0, n).copy_(rows.index_select(0, index));
  w->panels_ = chosen.view({panels, width, quads, 4}).permute({0, 2, 1, 3}).contiguous();
  auto gather = [&](const at::Tensor& per_output) {
    at::Tensor out = at::zeros({padded}, per_output.options());
    out.narrow(0, 0, n).copy_(per_output.index_select(0, index));
    return out;
  };
  w->col_sums_ = gather(col_sums_);
  w->scales_ = gather(scales_);
  w->bias_ = gather(bias_);
  w->counted_.set(static_cast<int64_t>(w->panels_.nbytes()));
  return w;
}

const char* Int8PanelWeight::kernel() const { return kernel_ == Int8Kernel::vnni ? "vnni" : "avx2"; }

int32_t Int8PanelWeight::max_code() const { return kernel_ == Int8Kernel::vnni ? 255 : 127; }

at::Tensor Int8PanelWeight::apply(const at::Tensor& x) const {
  RECORD_FUNCTION("t2t::int8_linear", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(x.dim() == 2 && x.size(1) == in_ && x.scalar_type() == at::kFloat &&
                  x.device().is_cpu() && x.is_contiguous(),
              "Int8PanelWeight: x must be contiguous float32 [rows, ", in_, "], got ", x.sizes());
#ifdef T2T_X86_KERNELS
  const int64_t rows = x.size(0);
  auto y = at::empty({rows, out_}, x.options());
  if (rows == 0) return y;
  const bool vnni = kernel_ == Int8Kernel::vnni;
  std::vector<uint8_t> codes(static_cast<size_t>(rows * in4_));
  std::vector<float> row_scales(rows);
  std::vector<int32_t> zeros(rows);
  const float* xp = x.data_ptr<float>();
  const auto quantize = vnni ? quantize_row_avx512 : quantize_row_avx2;
  for (int64_t r = 0; r < rows; ++r)
    quantize(xp + r * in_, in_, in4_, max_code(), codes.data() + r * in4_, &row_scales[r],
             &zeros[r]);
  if (!vnni) {
    std::vector<uint8_t> grouped(codes.size());
    interleave_quads(codes.data(), rows, in4_, grouped.data());
    codes.swap(grouped);
  }
  const int64_t panels = panels_.size(0), width = panels_.size(2);
  const int8_t* wp = panels_.data_ptr<int8_t>();
  const int32_t* sums = col_sums_.data_ptr<int32_t>();
  const float* scales = scales_.data_ptr<float>();
  const float* bias = bias_.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t per_panel = rows * in4_ * width;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 21) / std::max<int64_t>(1, per_panel));
  const int64_t group = vnni ? kRows : kAvx2Rows;
  // The AVX2 kernel reads ahead whatever the weights' size, as the float32
  // AVX2 kernel does: on tiny's decoding, 1.87 against 1.96 thread-s of
  // products (means of 4 alternating profiled runs).
  const bool ahead = vnni ? read_ahead() : true;
  at::parallel_for(0, panels, grain, [&](int64_t begin, int64_t end) {
    if (ahead)
      panel_product<PanelPrefetch>(vnni ? kVnniCalls<PanelPrefetch> : kAvx2Calls<PanelPrefetch>,
                                   group, width, codes.data(), rows, in4_, wp, out_, sums, scales,
                                   bias, row_scales.data(), zeros.data(), yp, begin, end);
    else
      panel_product<NoPrefetch>(vnni ? kVnniCalls<NoPrefetch> : kAvx2Calls<NoPrefetch>, group,
                                width, codes.data(), rows, in4_, wp, out_, sums, scales, bias,
                                row_scales.data(), zeros.data(), yp, begin, end);
  });
  return y;
#else
  TORCH_CHECK(false, "Int8PanelWeight: no kernel");
#endif
}

}  // namespace t2t
