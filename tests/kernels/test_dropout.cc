// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "t2t/kernels/dropout.h"
#include "tests/support/tensor_compare.h"

using t2t::test::max_diff;

namespace {

double fraction(const torch::Tensor& mask) {
  return mask.to(torch::kDouble).mean().item<double>();
}

// Restores the intra-op thread count a test changes.
struct ThreadCount {
  int saved = at::get_num_threads();
  ~ThreadCount() { at::set_num_threads(saved); }
};

}  // namespace

TEST_CASE("dropout drops at the given rate and scales the rest", "[dropout]") {
  torch::manual_seed(3);
  for (const double rate : {0.1, 0.5, 0.9}) {
    auto x = torch::ones({1000, 333}, torch::requires_grad());
    auto y = t2t::dropout(x, rate, true);
    // 333,000 draws: 5 standard deviations stay under 0.0027.
    CHECK(fraction(y.eq(0)) == Approx(rate).margin(0.0027));
    CHECK(max_diff(y.masked_select(y.ne(0)), torch::full({1}, 1.0 / (1.0 - rate))) < 1e-5);
    // The gradient passes where the output does, scaled alike.
    y.sum().backward();
    CHECK(max_diff(x.grad(), y.detach()) < 1e-6);
  }
}

TEST_CASE("dropout's decisions look independent across positions and calls", "[dropout]") {
  torch::manual_seed(5);
  const auto x = torch::ones({400, 1000});
  const auto a = t2t::dropout(x, 0.5, true).ne(0).to(torch::kDouble);
  const auto b = t2t::dropout(x, 0.5, true).ne(0).to(torch::kDouble);
  // Neighbours within a row, rows, blocks of the hash and two calls: every
  // pair agrees about half the time (400,000 pairs: sd 0.0008).
  const auto agree = [](const torch::Tensor& u, const torch::Tensor& v) {
    return u.eq(v).to(torch::kDouble).mean().item<double>();
  };
  CHECK(agree(a.narrow(1, 0, 999), a.narrow(1, 1, 999)) == Approx(0.5).margin(0.004));
  CHECK(agree(a.narrow(0, 0, 399), a.narrow(0, 1, 399)) == Approx(0.5).margin(0.004));
  CHECK(agree(a.narrow(0, 0, 200), a.narrow(0, 200, 200)) == Approx(0.5).margin(0.004));
  CHECK(agree(a, b) == Approx(0.5).margin(0.004));
  // Each 16,384-element block keeps about half.
  const auto per_block = a.flatten().narrow(0, 0, 24 * 16384).view({24, 16384}).mean(1);
  CHECK((per_block - 0.5).abs().max().item<double>() < 0.02);
}

TEST_CASE("dropout follows the default generator and not the thread count", "[dropout]") {
  ThreadCount restore;
  const auto x = torch::randn({3, 50000});
  at::set_num_threads(1);
  torch::manual_seed(11);
  const auto one = t2t::dropout(x, 0.3, true);
  at::set_num_threads(2);
  torch::manual_seed(11);
  const auto two = t2t::dropout(x, 0.3, true);
  CHECK(torch::equal(one, two));
  // A saved generator state replays the same masks.
  auto generator = at::detail::getDefaultCPUGenerator();
  const auto state = generator.get_state();
  const auto first = t2t::dropout(x, 0.3, true);
  generator.set_state(state);
  CHECK(torch::equal(first, t2t::dropout(x, 0.3, true)));
  CHECK(!torch::equal(first, t2t::dropout(x, 0.3, true)));
}

TEST_CASE("dropout is off outside training, at rate 0 and below 2^-33", "[dropout]") {
  const auto x = torch::randn({4, 5});
  CHECK(t2t::dropout(x, 0.1, false).is_same(x));
  CHECK(t2t::dropout(x, 0.0, true).is_same(x));
  CHECK(torch::equal(t2t::dropout(x, 1e-12, true), x));
  CHECK(torch::equal(t2t::dropout_add(x, x, 0.1, false), x + x));
  CHECK(torch::equal(t2t::relu_dropout(x, 0.1, false), torch::relu(x)));
  // rate 1 drops everything, as torch::dropout does.
  CHECK(t2t::dropout(x, 1.0, true).abs().sum().item<double>() == 0.0);
}

TEST_CASE("dropout takes strided views and keeps NaN", "[dropout]") {
  torch::manual_seed(2);
  const auto x = torch::randn({64, 300}).t();
  torch::manual_seed(4);
  const auto y = t2t::dropout(x, 0.2, true);
  torch::manual_seed(4);
  const auto y_contiguous = t2t::dropout(x.contiguous(), 0.2, true);
  CHECK(torch::equal(y, y_contiguous));
  // NaN propagates through dropped and kept elements alike, as x * mask.
  const auto nan = torch::full({1000}, std::nan(""));
  CHECK(t2t::dropout(nan, 0.5, true).isnan().all().item<bool>());
}

TEST_CASE("dropout_add is the residual plus dropout, gradients included", "[dropout]") {
  auto x = torch::randn({7, 9000}, torch::requires_grad());
  auto residual = torch::randn({7, 9000}, torch::requires_grad());
  torch::manual_seed(8);
  auto fused = t2t::dropout_add(x, residual, 0.3, true);
  const auto g = torch::randn_like(fused);
  const auto grads = torch::autograd::grad({fused}, {x, residual}, {g});
  torch::manual_seed(8);
  auto plain = t2t::dropout(x, 0.3, true) + residual;
  const auto expected = torch::autograd::grad({plain}, {x, residual}, {g});
  CHECK(max_diff(fused, plain) < 1e-6);
  CHECK(max_diff(grads[0], expected[0]) == 0);
  CHECK(max_diff(grads[1], expected[1]) == 0);
  CHECK_THROWS(t2t::dropout_add(x, residual.narrow(1, 0, 10), 0.3, true));
}

TEST_CASE("relu_dropout is dropout of relu, gradients included", "[dropout]") {
  auto x = torch::randn({5, 20000}, torch::requires_grad());
  torch::manual_seed(9);
  auto fused = t2t::relu_dropout(x, 0.25, true);
  const auto g = torch::randn_like(fused);
  const auto grad = torch::autograd::grad({fused}, {x}, {g})[0];
  torch::manual_seed(9);
  auto plain = t2t::dropout(torch::relu(x), 0.25, true);
  const auto expected = torch::autograd::grad({plain}, {x}, {g})[0];
  CHECK(torch::equal(fused, plain));
  CHECK(max_diff(grad, expected) == 0);
  // Some positive inputs were dropped and some kept: both branches ran.
  const auto positive = x.detach() > 0;
  CHECK(fraction(fused.eq(0).logical_and(positive)) > 0.05);
  CHECK(fraction(fused.gt(0)) > 0.3);
}

TEST_CASE("dropout works in bfloat16 through float32", "[dropout]") {
  auto x = torch::ones({100, 1000}, torch::dtype(torch::kBFloat16).requires_grad(true));
  auto y = t2t::dropout(x, 0.1, true);
  CHECK(y.scalar_type() == torch::kBFloat16);
  CHECK(fraction(y.eq(0)) == Approx(0.1).margin(0.005));
  y.sum().backward();
  CHECK(x.grad().scalar_type() == torch::kBFloat16);
  CHECK(max_diff(x.grad().to(torch::kFloat), y.detach().to(torch::kFloat)) < 1e-2);
}

TEST_CASE("dropout leaves float64 at full precision", "[dropout]") {
  torch::manual_seed(6);
  const auto x = torch::randn({200, 300}, torch::kDouble) * (1.0 + 1e-12);
  const auto y = t2t::dropout(x, 0.3, true);
  const auto residual = torch::randn_like(x);
  const auto z = t2t::dropout_add(x, residual, 0.3, true);
  CHECK(y.scalar_type() == torch::kDouble);
  CHECK(z.scalar_type() == torch::kDouble);
  const auto kept = y.ne(0);
  CHECK(fraction(kept) == Approx(0.7).margin(0.01));
  CHECK(max_diff(y.masked_select(kept), x.masked_select(kept) / 0.7) < 1e-14);
  const auto z_kept = z.ne(residual);
  CHECK(max_diff(z.masked_select(z_kept), (residual + x / 0.7).masked_select(z_kept)) < 1e-14);
}
