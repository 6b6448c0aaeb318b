#include "models/onednn_linear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>

#include <optional>
#include <string_view>

namespace t2t {
namespace {

// Rows below which oneDNN's per-call set-up (~10 us) outweighs its faster
// kernel: measured on [M x 128] x [128 x 512], MKL wins at 4 rows and
// loses from 16.
constexpr int64_t kMinRows = 12;

using LinearPointwise = at::Tensor(const at::Tensor&, const at::Tensor&,
                                   const std::optional<at::Tensor>&, std::string_view,
                                   c10::List<std::optional<at::Scalar>>,
                                   std::optional<std::string_view>);

// The op, or nullptr when this LibTorch has no oneDNN.
const c10::TypedOperatorHandle<LinearPointwise>* linear_pointwise() {
  static const auto* handle = []() -> const c10::TypedOperatorHandle<LinearPointwise>* {
    if (!at::hasMKLDNN()) return nullptr;
    const auto op = c10::Dispatcher::singleton().findSchema({"mkldnn::_linear_pointwise", ""});
    if (!op) return nullptr;
    return new c10::TypedOperatorHandle<LinearPointwise>(op->typed<LinearPointwise>());
  }();
  return handle;
}

}  // namespace

bool use_onednn_linear(const at::Tensor& x) {
  if (at::GradMode::is_enabled() || x.scalar_type() != at::kFloat || !x.device().is_cpu() ||
      x.dim() == 0 || x.size(-1) == 0)
    return false;
  if (x.numel() / x.size(-1) < kMinRows) return false;
  return linear_pointwise() != nullptr;
}

at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         bool relu) {
  std::optional<at::Tensor> b;
  if (bias.defined()) b = bias;
  return linear_pointwise()->call(x.contiguous(), weight, b, relu ? "relu" : "none",
                                 c10::List<std::optional<at::Scalar>>(), std::nullopt);
}

}  // namespace t2t
