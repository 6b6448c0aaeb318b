#include "models/dense.h"

#include "models/onednn_linear.h"

namespace t2t {

torch::Tensor DenseImpl::forward(const torch::Tensor& x) {
  if (int8_) return (*int8_)(x);
  if (use_onednn_linear(x)) return onednn_linear(x, weight, bias);
  return torch::nn::LinearImpl::forward(x);
}

torch::Tensor DenseImpl::forward_relu(const torch::Tensor& x) {
  if (!int8_ && use_onednn_linear(x)) return onednn_linear(x, weight, bias, true);
  return forward(x).relu_();
}

void DenseImpl::quantize_int8(const std::string& what) {
  int8_ = std::make_shared<const Int8Linear>(weight, bias, what);
}

}  // namespace t2t
