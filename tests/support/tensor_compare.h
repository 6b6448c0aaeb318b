// Comparing tensors in the tests. Include after <torch/torch.h>.
#pragma once

namespace t2t::test {

// The largest elementwise |a - b|, computed in the tensors' own dtype on
// their device. (tests/cuda/test_cuda.cc has its own, which moves both to
// the CPU in float64 first.)
inline double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace t2t::test
