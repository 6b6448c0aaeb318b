// The numeric helpers of the CPU kernels (t2t/kernels/fast_math.h): each
// vectorized version against a plain loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "t2t/kernels/fast_math.h"

TEST_CASE("block maxima: every kernel this CPU runs gives the plain loop's", "[fast_math]") {
  const auto kernels = t2t::block_maxima_kernels();
  REQUIRE(std::string(kernels.back().first) == "plain");
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 5.0f);
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  // Whole blocks, a short last block, less than one block, one value.
  for (const int64_t n : {1, 7, 63, 64, 65, 128, 200, 8192, 8195}) {
    std::vector<float> x(n);
    for (auto& v : x) v = normal(gen);
    if (n > 100) std::fill(x.begin() + 64, x.begin() + 96, kNegInf);  // a block half -inf
    const int64_t blocks = (n + t2t::kMaxBlock - 1) / t2t::kMaxBlock;
    std::vector<float> want(blocks, kNegInf);
    for (int64_t i = 0; i < n; ++i)
      want[i / t2t::kMaxBlock] = std::max(want[i / t2t::kMaxBlock], x[i]);
    const float want_max = *std::max_element(x.begin(), x.end());
    for (const auto& [name, kernel] : kernels) {
      INFO(name << ", n " << n);
      std::vector<float> got(blocks, 0.0f);
      CHECK(kernel(x.data(), n, got.data()) == want_max);
      CHECK(got == want);
      CHECK(kernel(x.data(), n, nullptr) == want_max);  // the maximum alone
    }
    CHECK(t2t::row_max(x.data(), n) == want_max);
    const auto [best, sum] = t2t::max_exp_sum(x.data(), n);
    CHECK(best == want_max);
    double total = 0;
    for (float v : x) total += std::exp(static_cast<double>(v) - want_max);
    CHECK(sum == Approx(total).epsilon(1e-5));
  }
}
