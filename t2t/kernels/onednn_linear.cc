#include "t2t/kernels/onednn_linear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>

#include <cstdlib>
#include <optional>
#include <string_view>

namespace t2t {
namespace {

// Rows below which oneDNN's per-call set-up outweighs its faster kernel
// (measured: MKL wins at 4 rows and loses from 16). A weight of many rows
// (a softmax over a vocabulary) pays for oneDNN even at a few rows.
constexpr int64_t kMinRows = 12;
constexpr int64_t kWideOut = 2048;

using LinearPointwise = at::Tensor(const at::Tensor&, const at::Tensor&,
                                   const std::optional<at::Tensor>&, std::string_view,
                                   c10::List<std::optional<at::Scalar>>,
                                   std::optional<std::string_view>);

using ReorderLinearWeight = at::Tensor(const at::Tensor&, std::optional<int64_t>);

// The oneDNN op `name` of this signature, or nullptr when this LibTorch has
// no oneDNN (looked up once by each caller).
template <typename Signature>
const c10::TypedOperatorHandle<Signature>* onednn_op(const char* name) {
  if (!at::hasMKLDNN()) return nullptr;
  const auto op = c10::Dispatcher::singleton().findSchema({name, ""});
  if (!op) return nullptr;
  return new c10::TypedOperatorHandle<Signature>(op->typed<Signature>());
}

const c10::TypedOperatorHandle<LinearPointwise>* linear_pointwise() {
  static const auto* handle = onednn_op<LinearPointwise>("mkldnn::_linear_pointwise");
  return handle;
}

const c10::TypedOperatorHandle<ReorderLinearWeight>* reorder_linear_weight() {
  static const auto* handle = onednn_op<ReorderLinearWeight>("mkldnn::_reorder_linear_weight");
  return handle;
}

// The row count oneDNN picks the weight's layout for: a beam search's
// typical product (a batch of sentences times their beams); measured 32
// to 128 on the decoders, with the same speed.
constexpr int64_t kPackForRows = 64;

}  // namespace

bool OnednnWeight::available() { return linear_pointwise() && reorder_linear_weight(); }

std::shared_ptr<const OnednnWeight> OnednnWeight::pack(const at::Tensor& weight) {
  if (!weight.defined() || weight.dim() != 2 || weight.scalar_type() != at::kFloat ||
      !weight.device().is_cpu() || weight.numel() == 0 || !available())
    return nullptr;
  auto packed = std::make_shared<OnednnWeight>();
  packed->packed_ = reorder_linear_weight()->call(weight.contiguous(), kPackForRows);
  packed->source_ = WeightStamp(weight);
  return packed;
}

const at::Tensor* OnednnWeight::packed_for(const at::Tensor& weight) const {
  return source_.matches(weight) ? &packed_ : nullptr;
}

bool use_onednn_linear(const at::Tensor& x, int64_t out) {
  if (at::GradMode::is_enabled() || x.scalar_type() != at::kFloat || !x.device().is_cpu() ||
      x.dim() == 0 || x.size(-1) == 0)
    return false;
  const int64_t rows = x.numel() / x.size(-1);
  if (rows < kMinRows && !(out >= kWideOut && rows >= 2)) return false;
  return linear_pointwise() != nullptr;
}

int64_t padded_rows(int64_t rows) {
  if (rows < 16) return rows;
  int64_t step = 16;
  while (step * 16 <= rows) step *= 2;  // step = max(16, 2^floor(log2 rows) / 8)
  return (rows + step - 1) / step * step;
}

at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         bool relu, const OnednnWeight* packed) {
  std::optional<at::Tensor> b;
  if (bias.defined()) b = bias;
  const int64_t in = x.size(-1);
  const int64_t rows = x.numel() / in;
  // A vocabulary-wide product costs more per call than its kernel costs to
  // compile once: its padding would cost more than it saves.
  const int64_t padded = weight.size(0) < kWideOut ? padded_rows(rows) : rows;
  const at::Tensor* blocked = packed ? packed->packed_for(weight) : nullptr;
  const at::Tensor& w = blocked ? *blocked : weight;
  auto call = [&](const at::Tensor& input) {
    return linear_pointwise()->call(input, w, b, relu ? "relu" : "none",
                                   c10::List<std::optional<at::Scalar>>(), std::nullopt);
  };
  if (padded == rows) return call(x.contiguous());
  // Zero rows: finite, and dropped with the result's tail (a view, no copy).
  at::Tensor input = at::empty({padded, in}, x.options());
  input.narrow(0, 0, rows).copy_(x.reshape({rows, in}));
  input.narrow(0, rows, padded - rows).zero_();
  auto sizes = x.sizes().vec();
  sizes.back() = weight.size(0);
  return call(input).narrow(0, 0, rows).view(sizes);
}

}  // namespace t2t
