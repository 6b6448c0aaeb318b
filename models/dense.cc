#include "models/dense.h"

namespace t2t {

torch::Tensor DenseImpl::forward(const torch::Tensor& x) {
  if (int8_) return (*int8_)(x);
  return torch::nn::LinearImpl::forward(x);
}

void DenseImpl::quantize_int8(const std::string& what) {
  int8_ = std::make_shared<const Int8Linear>(weight, bias, what);
}

}  // namespace t2t
