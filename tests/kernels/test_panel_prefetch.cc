// Reading weight panels ahead (t2t/kernels/panel_prefetch.h): taken once the
// packed weights alive outgrow the L3 cache, and then the products give the
// same bits as without it.
// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <vector>

#include "t2t/kernels/cpu_linear.h"
#include "t2t/kernels/int8_linear.h"
#include "t2t/kernels/panel_prefetch.h"
#include "t2t/kernels/int8_panels.h"
#include "tests/support/test_util.h"

namespace {

// Packed float32 weights of 4 MiB each, kept alive until read_ahead() holds
// or `most` of them are made; empty when it held before any.
std::vector<std::shared_ptr<const t2t::CpuLinearWeight>> ballast_until_read_ahead(int most) {
  std::vector<std::shared_ptr<const t2t::CpuLinearWeight>> ballast;
  while (!t2t::read_ahead() && static_cast<int>(ballast.size()) < most)
    ballast.push_back(t2t::CpuLinearWeight::pack(torch::zeros({1024, 1024})));
  return ballast;
}

}  // namespace

TEST_CASE("the calls over a panel read all of the next one between them", "[cpu_linear]") {
  // Each call's prefetches, replayed: the lines of `next` touched. A call
  // reads at most two lines a step, which covers a float32 panel's (two
  // lines an input) whatever the row groups, and an int8 one's (four lines
  // a quad of inputs) from two row groups on.
  for (const int64_t bytes : {64 * 1024, 16 * 1024, 5000, 64})
    for (const int64_t groups : {1, 2, 3, 16, 22})
      for (const int64_t steps : {1, 128, 512}) {
        const int64_t lines = (bytes + 63) / 64;
        if ((lines + groups - 1) / groups > 2 * steps) continue;
        INFO("bytes " << bytes << ", groups " << groups << ", steps " << steps);
        alignas(64) static char here[64], next[1 << 17];
        const t2t::PanelReadAhead plan(bytes, groups, steps);
        std::set<int64_t> touched;
        for (int64_t g = 0; g < groups; ++g) {
          // PanelPrefetch keeps its address to itself: walk it as tick() does
          // through a copy whose address we can read.
          auto ahead = plan.for_group<t2t::PanelPrefetch>(here, next, g);
          for (int64_t s = 0; s < steps; ++s) {
            for (const char* at : ahead.next_lines())
              if (at >= next && at < next + sizeof next) touched.insert((at - next) / 64);
            ahead.tick();
          }
        }
        for (int64_t line = 0; line < lines; ++line) {
          INFO("line " << line);
          CHECK(touched.count(line) == 1);
        }
      }
  // Without a next panel, a call only touches the line it reads anyway.
  alignas(64) static char here[64];
  auto none = t2t::PanelReadAhead(4096, 2, 8).for_group<t2t::PanelPrefetch>(here, nullptr, 1);
  for (int s = 0; s < 8; ++s) {
    for (const char* at : none.next_lines()) CHECK(at == here);
    none.tick();
  }
}

TEST_CASE("products read their panels ahead once the packed weights outgrow the L3 cache, "
          "with the same bits",
          "[cpu_linear]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(31);
  if (t2t::read_ahead()) T2T_SKIP("packed weights left alive by another test already read ahead");
  // Widths around the panels (32 float32 columns, 64 int8 ones), row counts
  // around the row groups and past a chunk of 128 rows.
  const auto weight = torch::randn({200, 300}) * 0.1;
  const auto bias = torch::randn({200});
  const auto packed = t2t::CpuLinearWeight::pack(weight);
  if (!packed) T2T_SKIP("no CPU inference kernel here (neither AVX-512, AVX2 with FMA, nor oneDNN)");
  const auto int8 = t2t::quantize_rows(weight, "test");
  const auto int8_panels = t2t::Int8PanelWeight::pack(int8, bias);
  std::vector<torch::Tensor> inputs, plain, plain_int8;
  for (const int64_t rows : {1, 5, 8, 24, 129, 300}) {
    inputs.push_back(torch::randn({rows, 300}));
    plain.push_back(packed->apply(inputs.back(), bias, false));
    if (int8_panels) plain_int8.push_back(int8_panels->apply(inputs.back()));
  }

  auto ballast = ballast_until_read_ahead(64);
  if (!t2t::read_ahead()) T2T_SKIP("256 MiB of packed weights do not outgrow this L3 cache");
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("rows " << inputs[i].size(0));
    CHECK(torch::equal(packed->apply(inputs[i], bias, false), plain[i]));
    if (int8_panels) CHECK(torch::equal(int8_panels->apply(inputs[i]), plain_int8[i]));
  }
  // The weights' bytes stop counting with them.
  ballast.clear();
  CHECK_FALSE(t2t::read_ahead());
}
