#include "models/dense.h"

#include <cmath>

#include "t2t/core/error.h"
#include "t2t/kernels/onednn_linear.h"
#include "t2t/model/skip_init.h"

namespace t2t {

DenseImpl::DenseImpl(const torch::nn::LinearOptions& options) : options(options) { reset(); }

void DenseImpl::reset() {
  weight = register_parameter("weight",
                              torch::empty({options.out_features(), options.in_features()}));
  bias = options.bias() ? register_parameter("bias", torch::empty(options.out_features()))
                        : register_parameter("bias", {}, /*requires_grad=*/false);
  if (skip_initialization()) return;
  // torch::nn::Linear's draws, in its order, so that a model is initialised
  // as it always was.
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const auto fans = torch::nn::init::_calculate_fan_in_and_fan_out(weight);
    const double bound = 1 / std::sqrt(static_cast<double>(std::get<0>(fans)));
    torch::nn::init::uniform_(bias, -bound, bound);
  }
}

torch::Tensor DenseImpl::forward(const torch::Tensor& x) {
  if (int8_) return (*int8_)(x);
  if (const auto* packed = CpuLinearWeight::usable(packed_, weight, x))
    return packed->apply(x, bias, false);
  if (use_onednn_linear(x, weight.size(0))) return onednn_linear(x, weight, bias);
  return torch::nn::functional::linear(x, weight, bias);
}

torch::Tensor DenseImpl::forward_relu(const torch::Tensor& x) {
  if (int8_) return forward(x).relu_();
  if (const auto* packed = CpuLinearWeight::usable(packed_, weight, x))
    return packed->apply(x, bias, true);
  if (use_onednn_linear(x, weight.size(0))) return onednn_linear(x, weight, bias, true);
  return forward(x).relu_();
}

void DenseImpl::quantize_int8(const std::string& what) {
  int8_ = std::make_shared<const Int8Linear>(weight, bias, what);
  packed_.reset();
}

void DenseImpl::pack_for_inference() {
  packed_ = int8_ ? nullptr : CpuLinearWeight::pack(weight);
}

Int8Weights DenseImpl::int8_weights(const std::string& what) const {
  return quantize_rows(weight, what);
}

void DenseImpl::load_int8(const Int8Weights& weights, const std::string& what) {
  if (weights.values.defined() && weights.values.dim() == 2 &&
      (weights.values.size(0) != weight.size(0) || weights.values.size(1) != weight.size(1)))
    throw Error(what + ": int8 weights " + c10::str(weights.values.sizes()) +
                " do not fit the layer's " + c10::str(weight.sizes()) +
                " (were the hparams changed?)");
  int8_ = std::make_shared<const Int8Linear>(weights, bias, what);
  packed_.reset();
  release_float_weight();
}

void DenseImpl::dequantize() {
  if (int8_ && weight.numel() == 0 && int8_->in_features() * int8_->out_features() > 0)
    throw Error("this dense layer's float weight was released: it stays int8");
  int8_.reset();
}

void DenseImpl::release_float_weight() {
  if (!int8_) throw Error("release_float_weight() on a dense layer that is not quantized");
  torch::NoGradGuard no_grad;
  weight.set_data(torch::empty({0}, weight.options()));
}

}  // namespace t2t
