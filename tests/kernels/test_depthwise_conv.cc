// t2t's depthwise convolution (t2t/kernels/depthwise_conv.h) against
// LibTorch's grouped convolution: values and both gradients.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "t2t/kernels/depthwise_conv.h"
#include "tests/support/tensor_compare.h"

using t2t::test::max_diff;

TEST_CASE("depthwise_conv1d equals a grouped convolution, forward and backward", "[kernels]") {
  namespace F = torch::nn::functional;
  torch::manual_seed(3);
  for (const auto& [channels, width, length] :
       {std::tuple<int64_t, int64_t, int64_t>{64, 9, 20}, {16, 11, 11}, {37, 7, 30}, {130, 1, 5}}) {
    INFO("channels " << channels << ", width " << width << ", length " << length);
    const auto x = torch::randn({3, length, channels}, torch::requires_grad());
    const auto w = torch::randn({channels, 1, width}, torch::requires_grad());
    const auto y = t2t::depthwise_conv1d(x, w);
    const auto x2 = x.detach().clone().requires_grad_(true);
    const auto w2 = w.detach().clone().requires_grad_(true);
    const auto want =
        F::conv1d(x2.transpose(1, 2), w2, F::Conv1dFuncOptions().groups(channels)).transpose(1, 2);
    REQUIRE(y.sizes() == want.sizes());
    CHECK(max_diff(y, want) < 1e-5);
    const auto g = torch::randn_like(y);
    (y * g).sum().backward();
    (want * g).sum().backward();
    CHECK(max_diff(x.grad(), x2.grad()) < 1e-5);
    CHECK(max_diff(w.grad(), w2.grad()) < 1e-4);
  }
  // Other types go through LibTorch's convolution.
  const auto xd = torch::randn({2, 12, 8}, torch::kDouble);
  const auto wd = torch::randn({8, 1, 3}, torch::kDouble);
  CHECK(t2t::depthwise_conv1d(xd, wd).sizes() == torch::IntArrayRef({2, 10, 8}));
  CHECK_THROWS(t2t::depthwise_conv1d(torch::randn({2, 2, 8}), torch::randn({8, 1, 3})));
}
