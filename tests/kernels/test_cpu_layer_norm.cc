// Layer normalization for CPU inference (t2t/kernels/cpu_layer_norm.h): T2T's
// arithmetic, LibTorch's results up to rounding, each row on its own.
// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "models/transformer_layers.h"
#include "t2t/kernels/cpu_layer_norm.h"
#include "tests/support/test_util.h"

TEST_CASE("the CPU layer norm equals LibTorch's up to rounding, whatever the rows",
          "[cpu_layer_norm]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(41);
  // Widths of 64s (the AVX-512 kernel's) and others (the plain loops').
  for (const int64_t channels : {512, 128, 64, 37, 16, 1}) {
    const auto weight = torch::randn({channels}), bias = torch::randn({channels});
    for (const int64_t rows : {1, 3, 128, 300}) {
      INFO("channels " << channels << ", rows " << rows);
      // Values far from zero: a one-pass variance would lose them.
      const auto x = torch::randn({rows, channels}) * 3 + 100;
      REQUIRE(t2t::cpu_layer_norm_usable(x, weight, bias));
      const auto got = t2t::cpu_layer_norm(x, weight, bias, 1e-6);
      const auto want = torch::layer_norm(x, {channels}, weight, bias, 1e-6);
      REQUIRE(got.sizes() == x.sizes());
      CHECK(torch::allclose(got, want, 1e-4, 1e-4));
      // A row's result does not depend on the rows beside it.
      CHECK(torch::equal(t2t::cpu_layer_norm(x.narrow(0, rows - 1, 1), weight, bias, 1e-6),
                         got.narrow(0, rows - 1, 1)));
    }
  }
  // More dimensions, and a strided input.
  const auto weight = torch::randn({64}), bias = torch::randn({64});
  const auto x3 = torch::randn({2, 5, 128}).narrow(2, 0, 64);
  CHECK(torch::allclose(t2t::cpu_layer_norm(x3, weight, bias, 1e-6),
                        torch::layer_norm(x3, {64}, weight, bias, 1e-6), 1e-4, 1e-4));
  CHECK_THROWS(t2t::cpu_layer_norm(torch::randn({3, 65}), weight, bias, 1e-6));
}

TEST_CASE("the CPU layer norm is taken only for float32 on the CPU without gradients",
          "[cpu_layer_norm]") {
  const auto weight = torch::randn({8}), bias = torch::randn({8});
  {
    torch::NoGradGuard no_grad;
    CHECK(t2t::cpu_layer_norm_usable(torch::randn({2, 8}), weight, bias));
    CHECK_FALSE(t2t::cpu_layer_norm_usable(torch::randn({2, 8}, torch::kDouble), weight, bias));
    CHECK_FALSE(t2t::cpu_layer_norm_usable(torch::randn({2, 9}), weight, bias));
    CHECK_FALSE(t2t::cpu_layer_norm_usable(torch::randn({2, 8}), weight, torch::Tensor()));
  }
  CHECK_FALSE(t2t::cpu_layer_norm_usable(torch::randn({2, 8}), weight, bias));
}

TEST_CASE("a layer's pre- and postprocessing normalizes alike in training and inference",
          "[cpu_layer_norm]") {
  torch::manual_seed(42);
  t2t::TransformerLayerConfig config;
  config.hidden_size = 64;
  config.norm_type = "layer";
  t2t::PrePostProcess process("n", config);
  process->eval();
  // Parameters away from their initial values, so both are exercised.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : process->parameters()) p.copy_(torch::randn_like(p));
  }
  const auto x = torch::randn({4, 3, 64});
  const auto with_grad = process->forward(torch::Tensor(), x);  // LibTorch's
  torch::NoGradGuard no_grad;
  const auto inference = process->forward(torch::Tensor(), x);  // cpu_layer_norm's
  CHECK(torch::allclose(inference, with_grad.detach(), 1e-5, 1e-5));
}
