#include "t2t/kernels/cpu_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cstring>

#include "t2t/kernels/cpu_features.h"
#include "t2t/kernels/onednn_linear.h"
#include "t2t/kernels/panel_prefetch.h"

namespace t2t {
namespace {

constexpr int64_t kPanel = 32;  // output columns a panel: two 16-lane registers
constexpr int64_t kRows = 8;    // rows of x a kernel call: 16 accumulators
// Rows of x a pass over the panels: their inputs stay in L2 meanwhile.
constexpr int64_t kRowChunk = 128;

#ifdef T2T_X86_KERNELS
T2T_INTRINSICS_BEGIN

// R rows of x (row stride ldx) times one panel [in, 32] into y (row stride
// ldy), `cols` of the panel's 32 columns real, while `ahead` (PanelPrefetch
// or NoPrefetch) reads its share of the next panel. Each output accumulates
// its products in input order, one fused multiply-add each.
template <int R, class Ahead>
__attribute__((target("avx512f"))) void panel_rows(const float* x, int64_t ldx,
                                                   const float* panel, int64_t in,
                                                   const float* bias, float* y, int64_t ldy,
                                                   int64_t cols, bool relu, Ahead ahead) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < in; ++k) {
    ahead.tick();
    const __m512 b_lo = _mm512_loadu_ps(panel + k * kPanel);
    const __m512 b_hi = _mm512_loadu_ps(panel + k * kPanel + 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(x[r * ldx + k]);
      lo[r] = _mm512_fmadd_ps(a, b_lo, lo[r]);
      hi[r] = _mm512_fmadd_ps(a, b_hi, hi[r]);
    }
  }
  const __mmask16 m_lo = cols >= 16 ? 0xffff : static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 m_hi =
      cols >= 32 ? 0xffff : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
  const __m512 bias_lo = bias ? _mm512_maskz_loadu_ps(m_lo, bias) : _mm512_setzero_ps();
  const __m512 bias_hi = bias ? _mm512_maskz_loadu_ps(m_hi, bias + 16) : _mm512_setzero_ps();
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    __m512 o_lo = _mm512_add_ps(lo[r], bias_lo), o_hi = _mm512_add_ps(hi[r], bias_hi);
    if (relu) {
      o_lo = _mm512_max_ps(o_lo, zero);
      o_hi = _mm512_max_ps(o_hi, zero);
    }
    _mm512_mask_storeu_ps(y + r * ldy, m_lo, o_lo);
    _mm512_mask_storeu_ps(y + r * ldy + 16, m_hi, o_hi);
  }
}

// The same products on CPUs with AVX2 and FMA but not AVX-512, over the same
// panels: 8-lane registers, so a call takes up to 6 rows of one 16-column
// half of a panel (12 accumulators). Each output is the same chain of fused
// multiply-adds in input order, then the bias, as the AVX-512 kernel's: the
// two give the same bits. The call's R rows come interleaved (`group`:
// [in, R], interleave_rows), so that its broadcasts read one stream with
// constant offsets rather than R streams a row apart. `cols` of the half's 16
// columns are real; stores of a partial half go through a buffer (AMD runs
// vmaskmovps stores in microcode, dozens of operations each).
template <int R, class Ahead>
__attribute__((target("avx2,fma"))) void half_panel_rows(const float* group, int64_t,
                                                         const float* half, int64_t in,
                                                         const float* bias, float* y, int64_t ldy,
                                                         int64_t cols, bool relu, Ahead ahead) {
  __m256 lo[R], hi[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int64_t k = 0; k < in; ++k) {
    ahead.tick();
    const __m256 b_lo = _mm256_loadu_ps(half + k * kPanel);
    const __m256 b_hi = _mm256_loadu_ps(half + k * kPanel + 8);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(group + k * R + r);
      lo[r] = _mm256_fmadd_ps(a, b_lo, lo[r]);
      hi[r] = _mm256_fmadd_ps(a, b_hi, hi[r]);
    }
  }
  alignas(32) float part[16] = {};
  if (bias && cols < 16) std::memcpy(part, bias, static_cast<size_t>(cols) * sizeof(float));
  const float* b = cols < 16 ? part : bias;
  // Zero without a bias, as the AVX-512 kernel adds: -0 sums become +0 in both.
  const __m256 bias_lo = bias ? _mm256_loadu_ps(b) : _mm256_setzero_ps();
  const __m256 bias_hi = bias ? _mm256_loadu_ps(b + 8) : _mm256_setzero_ps();
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m256 o_lo = _mm256_add_ps(lo[r], bias_lo), o_hi = _mm256_add_ps(hi[r], bias_hi);
    if (relu) {
      o_lo = _mm256_max_ps(o_lo, zero);
      o_hi = _mm256_max_ps(o_hi, zero);
    }
    if (cols == 16) {
      _mm256_storeu_ps(y + r * ldy, o_lo);
      _mm256_storeu_ps(y + r * ldy + 8, o_hi);
    } else {
      _mm256_store_ps(part, o_lo);
      _mm256_store_ps(part + 8, o_hi);
      std::memcpy(y + r * ldy, part, static_cast<size_t>(cols) * sizeof(float));
    }
  }
}
T2T_INTRINSICS_END

template <class Ahead>
using PanelRows = void (*)(const float*, int64_t, const float*, int64_t, const float*, float*,
                           int64_t, int64_t, bool, Ahead);
template <class Ahead>
constexpr PanelRows<Ahead> kPanelRows[kRows + 1] = {
    nullptr,               panel_rows<1, Ahead>, panel_rows<2, Ahead>,
    panel_rows<3, Ahead>, panel_rows<4, Ahead>, panel_rows<5, Ahead>,
    panel_rows<6, Ahead>, panel_rows<7, Ahead>, panel_rows<8, Ahead>};

// y [rows, out] = x [rows, in] times the panels, panels [begin, end); with
// PanelPrefetch, each panel's calls read the next one ahead.
template <class Ahead>
void panel_product(const float* x, int64_t rows, int64_t in, const float* panels, int64_t out,
                   const float* bias, float* y, bool relu, int64_t begin, int64_t end) {
  const int64_t panel_size = in * kPanel;
  for_each_panel_call<Ahead>(
      panels, panel_size * 4, begin, end, rows, kRowChunk, kRows, in,
      [&](int64_t p, int64_t r, int64_t n, Ahead ahead) {
        const int64_t col = p * kPanel, cols = std::min(kPanel, out - col);
        kPanelRows<Ahead>[n](x + r * in, in, panels + p * panel_size, in,
                             bias ? bias + col : nullptr, y + r * out + col, out, cols, relu,
                             ahead);
      });
}

constexpr int64_t kRowsAvx2 = 6;
template <class Ahead>
constexpr PanelRows<Ahead> kHalfPanelRows[kRowsAvx2 + 1] = {
    nullptr,                    half_panel_rows<1, Ahead>, half_panel_rows<2, Ahead>,
    half_panel_rows<3, Ahead>, half_panel_rows<4, Ahead>, half_panel_rows<5, Ahead>,
    half_panel_rows<6, Ahead>};

// x [rows, in] -> `grouped`, the same size: each row group as [in, n], its
// n rows' inputs side by side where half_panel_rows reads them. The groups
// are for_each_panel_call's: kRowsAvx2 rows at a time from the start of
// each chunk of kRowChunk rows, the chunk's last group the rest.
void interleave_rows(const float* x, int64_t rows, int64_t in, float* grouped) {
  for (int64_t c0 = 0; c0 < rows; c0 += kRowChunk) {
    const int64_t chunk_end = std::min(rows, c0 + kRowChunk);
    for (int64_t r0 = c0; r0 < chunk_end; r0 += kRowsAvx2) {
      const int64_t n = std::min(kRowsAvx2, chunk_end - r0);
      float* to = grouped + r0 * in;
      for (int64_t r = 0; r < n; ++r) {
        const float* from = x + (r0 + r) * in;
        for (int64_t k = 0; k < in; ++k) to[k * n + r] = from[k];
      }
    }
  }
}

// panel_product with the AVX2 kernel over interleave_rows' groups: each
// call's rows times the panel's two halves, the first half's call reading
// its share of the next panel.
template <class Ahead>
void half_panel_product(const float* grouped, int64_t rows, int64_t in, const float* panels,
                        int64_t out, const float* bias, float* y, bool relu, int64_t begin,
                        int64_t end) {
  const int64_t panel_size = in * kPanel;
  for_each_panel_call<Ahead>(
      panels, panel_size * 4, begin, end, rows, kRowChunk, kRowsAvx2, in,
      [&](int64_t p, int64_t r, int64_t n, Ahead ahead) {
        const int64_t col = p * kPanel, cols = std::min(kPanel, out - col);
        const float* panel = panels + p * panel_size;
        const float* group = grouped + r * in;
        kHalfPanelRows<Ahead>[n](group, n, panel, in, bias ? bias + col : nullptr,
                                 y + r * out + col, out, std::min<int64_t>(16, cols), relu,
                                 ahead);
        if (cols > 16)
          kHalfPanelRows<NoPrefetch>[n](group, n, panel + 16, in,
                                        bias ? bias + col + 16 : nullptr, y + r * out + col + 16,
                                        out, cols - 16, relu, NoPrefetch{});
      });
}
#endif

}  // namespace

bool CpuLinearWeight::runs_here(CpuLinearKernel kernel) {
  const auto& cpu = cpu_features();
  switch (kernel) {
    case CpuLinearKernel::best:
      return runs_here(CpuLinearKernel::avx512) || runs_here(CpuLinearKernel::avx2) ||
             runs_here(CpuLinearKernel::onednn);
    case CpuLinearKernel::avx512:
      return cpu.avx512f;
    case CpuLinearKernel::avx2:
      return cpu.avx2 && cpu.fma;
    case CpuLinearKernel::onednn:
      return OnednnWeight::available();
  }
  return false;
}

std::shared_ptr<const CpuLinearWeight> CpuLinearWeight::pack(const at::Tensor& weight,
                                                             CpuLinearKernel kernel) {
  if (!weight.defined() || weight.dim() != 2 || weight.scalar_type() != at::kFloat ||
      !weight.device().is_cpu() || weight.numel() == 0 || !runs_here(kernel))
    return nullptr;
  if (kernel == CpuLinearKernel::best)
    kernel = runs_here(CpuLinearKernel::avx512) ? CpuLinearKernel::avx512
             : runs_here(CpuLinearKernel::avx2) ? CpuLinearKernel::avx2
                                                : CpuLinearKernel::onednn;
  auto packed = std::make_shared<CpuLinearWeight>();
  packed->out_ = weight.size(0);
  packed->in_ = weight.size(1);
  packed->kernel_ = kernel;
  if (kernel != CpuLinearKernel::onednn) {
    // [out, in] -> [panels, in, 32], the last panel's missing columns zero.
    // Widths of whole panels (a Transformer's, as a rule) are laid out
    // straight from the weight, without a zero-padded copy of it first.
    const int64_t panels = (packed->out_ + kPanel - 1) / kPanel;
    at::Tensor padded = weight.contiguous();
    if (packed->out_ % kPanel != 0) {
      padded = at::zeros({panels * kPanel, packed->in_}, weight.options());
      padded.narrow(0, 0, packed->out_).copy_(weight);
    }
    packed->panels_ = padded.view({panels, kPanel, packed->in_}).transpose(1, 2).contiguous();
    packed->counted_.set(static_cast<int64_t>(packed->panels_.nbytes()));
  } else {
    packed->onednn_ = OnednnWeight::pack(weight);
    if (!packed->onednn_) return nullptr;
  }
  packed->source_ = WeightStamp(weight);
  return packed;
}

bool CpuLinearWeight::fits(const at::Tensor& weight) const { return source_.matches(weight); }

const CpuLinearWeight* CpuLinearWeight::usable(const std::shared_ptr<const CpuLinearWeight>& packed,
                                               const at::Tensor& weight, const at::Tensor& x) {
  if (!packed || at::GradMode::is_enabled() || !x.device().is_cpu() ||
      x.scalar_type() != at::kFloat || !packed->fits(weight))
    return nullptr;
  return packed.get();
}

const char* CpuLinearWeight::kernel() const {
  return kernel_ == CpuLinearKernel::avx512 ? "avx512"
         : kernel_ == CpuLinearKernel::avx2 ? "avx2"
                                            : "onednn";
}

at::Tensor CpuLinearWeight::apply(const at::Tensor& x, const at::Tensor& bias, bool relu) const {
  RECORD_FUNCTION("t2t::cpu_linear", std::vector<c10::IValue>());  // named in --profile traces
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.device().is_cpu() && x.dim() >= 1 &&
                  x.size(-1) == in_,
              "CpuLinearWeight: x must be float32 [..., ", in_, "] on the CPU, got ", x.toString(),
              " ", x.sizes());
  TORCH_CHECK(!bias.defined() || (bias.numel() == out_ && bias.scalar_type() == at::kFloat),
              "CpuLinearWeight: bias must be float32 [", out_, "]");
  if (onednn_) {
    if (use_onednn_linear(x, out_))
      return onednn_linear(x, source_.weight(), bias, relu, onednn_.get());
    const auto y = at::linear(x, source_.weight(), bias);
    return relu ? y.relu() : y;
  }
#ifdef T2T_X86_KERNELS
  const int64_t rows = x.numel() / in_;
  const auto input = x.reshape({rows, in_}).contiguous();
  const auto b = bias.defined() ? bias.contiguous() : at::Tensor();
  auto y = at::empty({rows, out_}, x.options());
  const int64_t panels = panels_.size(0);
  const float* xp = input.data_ptr<float>();
  const float* wp = panels_.data_ptr<float>();
  const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  // Panels split between threads once there is enough work for several.
  const int64_t per_panel = rows * in_ * kPanel;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, per_panel));
  const bool avx2 = kernel_ == CpuLinearKernel::avx2;
  const bool ahead = read_ahead();
  at::Tensor grouped;
  if (avx2) {
    grouped = at::empty({rows, in_}, x.options());
    interleave_rows(xp, rows, in_, grouped.data_ptr<float>());
    xp = grouped.data_ptr<float>();
  }
  at::parallel_for(0, panels, grain, [&](int64_t begin, int64_t end) {
    // The AVX2 kernel reads ahead even when the weights fit the L3 cache:
    // measured, it pays there, where the AVX-512 kernel's does not.
    if (avx2)
      half_panel_product<PanelPrefetch>(xp, rows, in_, wp, out_, bp, yp, relu, begin, end);
    else if (ahead)
      panel_product<PanelPrefetch>(xp, rows, in_, wp, out_, bp, yp, relu, begin, end);
    else
      panel_product<NoPrefetch>(xp, rows, in_, wp, out_, bp, yp, relu, begin, end);
  });
  auto sizes = x.sizes().vec();
  sizes.back() = out_;
  return y.view(sizes);
#else
  TORCH_CHECK(false, "CpuLinearWeight: no kernel");
#endif
}

}  // namespace t2t
