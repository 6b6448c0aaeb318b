// Comparing tensors in the tests. Include after <torch/torch.h>.
#pragma once

namespace t2t::test {

// The largest elementwise |a - b|, in float64 on the CPU, so that neither
// the tensors' own dtype nor their device rounds the difference.
inline double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.detach().cpu().to(torch::kDouble) - b.detach().cpu().to(torch::kDouble))
      .abs()
      .max()
      .item<double>();
}

}  // namespace t2t::test
