// The float32 linear kernels of CPU inference (oneDNN's op and t2t's own
// over packed weights): same results as at::linear, and taken only where
// they may be (no gradient, enough rows, an unchanged weight).
// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <set>
#include <utility>
#include <vector>

#include "models/dense.h"
#include "t2t/kernels/cpu_linear.h"
#include "t2t/kernels/onednn_linear.h"
#include "tests/support/test_util.h"

TEST_CASE("the oneDNN linear op equals at::linear up to rounding", "[onednn]") {
  if (!at::hasMKLDNN()) T2T_SKIP("this LibTorch has no oneDNN");
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  for (const int64_t rows : {12, 33, 128, 300}) {
    for (const int64_t out : {7, 128, 1000}) {
      const auto weight = torch::randn({out, 96}) * 0.1;
      const auto bias = torch::randn({out});
      const auto x = torch::randn({rows, 96});
      INFO("rows " << rows << " out " << out);
      REQUIRE(t2t::use_onednn_linear(x, out));
      const auto got = t2t::onednn_linear(x, weight, bias);
      // Padded rows (33 and 300 are) leave no trace in the result.
      REQUIRE(got.sizes() == torch::IntArrayRef({rows, out}));
      CHECK(got.is_contiguous());
      CHECK(torch::allclose(got, torch::linear(x, weight, bias), 1e-5, 1e-5));
      CHECK(torch::allclose(t2t::onednn_linear(x, weight, torch::Tensor()),
                            torch::linear(x, weight), 1e-5, 1e-5));
      CHECK(torch::allclose(t2t::onednn_linear(x, weight, bias, true),
                            torch::linear(x, weight, bias).relu(), 1e-5, 1e-5));
    }
  }
  // More than two dimensions, and a strided input.
  const auto weight = torch::randn({16, 32});
  const auto x3 = torch::randn({4, 5, 32});
  CHECK(torch::allclose(t2t::onednn_linear(x3, weight, torch::Tensor()), torch::linear(x3, weight),
                        1e-5, 1e-5));
  const auto strided = torch::randn({40, 64}).narrow(1, 0, 32);
  CHECK(torch::allclose(t2t::onednn_linear(strided, weight, torch::Tensor()),
                        torch::linear(strided, weight), 1e-5, 1e-5));
}

TEST_CASE("the oneDNN linear op is taken only without gradients and with enough rows",
          "[onednn]") {
  if (!at::hasMKLDNN()) T2T_SKIP("this LibTorch has no oneDNN");
  const auto x = torch::randn({64, 32});
  CHECK_FALSE(t2t::use_onednn_linear(x, 128));  // gradients on: it has no backward
  torch::NoGradGuard no_grad;
  CHECK(t2t::use_onednn_linear(x, 128));
  CHECK_FALSE(t2t::use_onednn_linear(torch::randn({2, 32}), 128));
  // A vocabulary-wide weight pays from two rows on.
  CHECK(t2t::use_onednn_linear(torch::randn({2, 32}), 8192));
  CHECK_FALSE(t2t::use_onednn_linear(torch::randn({1, 32}), 8192));
  CHECK_FALSE(t2t::use_onednn_linear(torch::zeros({0, 32}), 128));
  CHECK_FALSE(t2t::use_onednn_linear(torch::zeros({64, 0}), 128));
  CHECK_FALSE(t2t::use_onednn_linear(x.to(torch::kDouble), 128));
}

TEST_CASE("row counts are padded to a few buckets, at most an eighth past 128", "[onednn]") {
  for (int64_t rows = 1; rows < 16; ++rows) CHECK(t2t::padded_rows(rows) == rows);
  CHECK(t2t::padded_rows(16) == 16);
  CHECK(t2t::padded_rows(17) == 32);
  CHECK(t2t::padded_rows(128) == 128);
  CHECK(t2t::padded_rows(129) == 144);
  CHECK(t2t::padded_rows(255) == 256);
  CHECK(t2t::padded_rows(256) == 256);
  CHECK(t2t::padded_rows(257) == 288);
  CHECK(t2t::padded_rows(1000) == 1024);
  std::set<int64_t> buckets;
  for (int64_t rows = 1; rows <= 4096; ++rows) {
    const int64_t padded = t2t::padded_rows(rows);
    INFO(rows << " -> " << padded);
    CHECK(padded >= rows);
    if (rows >= 128) CHECK(padded - rows < rows / 8);
    buckets.insert(padded);
  }
  // 15 small counts, then 8 per doubling.
  CHECK(buckets.size() <= 15 + 8 * 9);
}

TEST_CASE("a Dense layer gives the same outputs with and without gradients", "[onednn]") {
  torch::manual_seed(6);
  t2t::Dense dense(torch::nn::LinearOptions(48, 80));
  const auto x = torch::randn({2, 30, 48});
  const auto trained = dense(x);  // ATen's kernel, with autograd
  REQUIRE(trained.requires_grad());
  torch::NoGradGuard no_grad;
  const auto inferred = dense(x);  // oneDNN's where available
  CHECK(torch::allclose(inferred, trained.detach(), 1e-5, 1e-5));
  CHECK(torch::allclose(dense->forward_relu(x), trained.detach().relu(), 1e-5, 1e-5));
}

TEST_CASE("a packed weight gives the plain one's outputs and is dropped once the weight changes",
          "[onednn]") {
  if (!at::hasMKLDNN()) T2T_SKIP("this LibTorch has no oneDNN");
  torch::NoGradGuard no_grad;
  torch::manual_seed(7);
  const auto weight = torch::randn({200, 64}) * 0.1;
  const auto bias = torch::randn({200});
  const auto packed = t2t::OnednnWeight::pack(weight);
  REQUIRE(packed);
  REQUIRE(packed->packed_for(weight));
  for (const int64_t rows : {2, 12, 37, 128}) {
    const auto x = torch::randn({rows, 64});
    INFO("rows " << rows);
    // The same kernel on the same numbers: the same bits.
    CHECK(torch::equal(t2t::onednn_linear(x, weight, bias, false, packed.get()),
                       t2t::onednn_linear(x, weight, bias)));
    CHECK(torch::equal(t2t::onednn_linear(x, weight, bias, true, packed.get()),
                       t2t::onednn_linear(x, weight, bias, true)));
  }
  // Not a float32 CPU matrix: nothing to pack.
  CHECK_FALSE(t2t::OnednnWeight::pack(weight.to(torch::kDouble)));
  CHECK_FALSE(t2t::OnednnWeight::pack(bias));
  // Another tensor of equal values is not the packed one's.
  CHECK_FALSE(packed->packed_for(weight.clone()));

  // Changed in place (a training step, a checkpoint copied in): the packed
  // copy is stale, and the weight is read as it now is.
  auto changing = weight.clone();
  const auto stale = t2t::OnednnWeight::pack(changing);
  changing.mul_(2);
  CHECK_FALSE(stale->packed_for(changing));
  const auto x = torch::randn({16, 64});
  CHECK(torch::allclose(t2t::onednn_linear(x, changing, bias, false, stale.get()),
                        torch::linear(x, changing, bias), 1e-5, 1e-5));
}

TEST_CASE("a packed Dense layer follows its weight when a checkpoint replaces it", "[onednn]") {
  if (!at::hasMKLDNN()) T2T_SKIP("this LibTorch has no oneDNN");
  torch::manual_seed(8);
  t2t::Dense dense(torch::nn::LinearOptions(48, 80));
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({40, 48});
  const auto before = dense(x);
  dense->pack_for_inference();
  CHECK(torch::allclose(dense(x), before, 1e-4, 1e-5));
  // set_data, as a loader adopting a file's tensor does: a new storage.
  dense->weight.set_data(torch::randn({80, 48}));
  CHECK(torch::allclose(dense(x), torch::linear(x, dense->weight, dense->bias), 1e-5, 1e-5));
  CHECK(torch::allclose(dense->forward_relu(x),
                        torch::linear(x, dense->weight, dense->bias).relu(), 1e-5, 1e-5));
  // A quantized layer has nothing packed: its int8 kernel answers.
  dense->pack_for_inference();
  dense->quantize_int8("test layer");
  CHECK(torch::equal(dense(x), t2t::Int8Linear(dense->weight, dense->bias, "test layer")(x)));
}

TEST_CASE("each CPU inference kernel equals at::linear, whatever the rows", "[onednn][cpu_linear]") {
  torch::NoGradGuard no_grad;
  int ran = 0;
  for (const auto kernel : {t2t::CpuLinearKernel::avx512, t2t::CpuLinearKernel::avx2,
                            t2t::CpuLinearKernel::onednn}) {
    if (!t2t::CpuLinearWeight::runs_here(kernel)) continue;
    ++ran;
    torch::manual_seed(9);
    // Widths around the 32-column panels, their 16-column halves and the
    // 8- and 6-row blocks; inputs of any count.
    for (const auto& [in, out] : std::vector<std::pair<int64_t, int64_t>>{
             {16, 32}, {37, 5}, {128, 129}, {64, 300}, {512, 96}, {24, 20}}) {
      const auto weight = torch::randn({out, in}) * 0.1;
      const auto bias = torch::randn({out});
      const auto packed = t2t::CpuLinearWeight::pack(weight, kernel);
      REQUIRE(packed);
      INFO("in " << in << ", out " << out << ", kernel " << packed->kernel());
      REQUIRE(packed->fits(weight));
      for (const int64_t rows : {1, 3, 6, 7, 8, 9, 13, 17, 130, 300}) {
        INFO("rows " << rows);
        const auto x = torch::randn({rows, in});
        const auto got = packed->apply(x, bias, false);
        REQUIRE(got.sizes() == torch::IntArrayRef({rows, out}));
        CHECK(torch::allclose(got, torch::linear(x, weight, bias), 1e-4, 1e-5));
        CHECK(torch::allclose(packed->apply(x, bias, true), torch::linear(x, weight, bias).relu(),
                              1e-4, 1e-5));
        CHECK(torch::allclose(packed->apply(x, torch::Tensor(), false), torch::linear(x, weight),
                              1e-4, 1e-5));
        // A row's result does not depend on the rows beside it: t2t's own
        // kernels sum each output in one order. oneDNN picks its blocking by
        // the row count, so there it holds only up to rounding.
        const auto alone = packed->apply(x.narrow(0, 0, 1), bias, false);
        if (kernel != t2t::CpuLinearKernel::onednn)
          CHECK(torch::equal(alone, got.narrow(0, 0, 1)));
        else
          CHECK(torch::allclose(alone, got.narrow(0, 0, 1), 1e-4, 1e-5));
      }
      // More dimensions, and a strided input.
      const auto x3 = torch::randn({2, 5, 2 * in}).narrow(2, 0, in);
      CHECK(torch::allclose(packed->apply(x3, bias, false), torch::linear(x3, weight, bias), 1e-4,
                            1e-5));
    }
  }
  if (ran == 0) T2T_SKIP("no CPU inference kernel here (neither AVX-512, AVX2 nor oneDNN)");
}

TEST_CASE("the AVX2 and AVX-512 kernels give the same bits", "[cpu_linear]") {
  if (!t2t::CpuLinearWeight::runs_here(t2t::CpuLinearKernel::avx512) ||
      !t2t::CpuLinearWeight::runs_here(t2t::CpuLinearKernel::avx2))
    T2T_SKIP("needs a CPU with AVX-512 (which has AVX2 too)");
  torch::NoGradGuard no_grad;
  torch::manual_seed(10);
  for (const auto& [in, out] :
       std::vector<std::pair<int64_t, int64_t>>{{128, 8192}, {512, 96}, {37, 5}, {64, 300}}) {
    const auto weight = torch::randn({out, in}) * 0.1;
    const auto bias = torch::randn({out});
    const auto wide = t2t::CpuLinearWeight::pack(weight, t2t::CpuLinearKernel::avx512);
    const auto narrow = t2t::CpuLinearWeight::pack(weight, t2t::CpuLinearKernel::avx2);
    for (const int64_t rows : {1, 5, 24, 128}) {
      INFO("in " << in << ", out " << out << ", rows " << rows);
      const auto x = torch::randn({rows, in});
      CHECK(torch::equal(wide->apply(x, bias, false), narrow->apply(x, bias, false)));
      CHECK(torch::equal(wide->apply(x, torch::Tensor(), true),
                         narrow->apply(x, torch::Tensor(), true)));
    }
  }
}

TEST_CASE("a packed weight is used only while it is the weight's", "[cpu_linear]") {
  const auto weight = torch::randn({40, 24});
  const auto packed = t2t::CpuLinearWeight::pack(weight);
  if (!packed) T2T_SKIP("no CPU inference kernel here (neither AVX-512, AVX2 nor oneDNN)");
  CHECK_FALSE(packed->fits(weight.clone()));
  auto changed = weight.clone();
  const auto stale = t2t::CpuLinearWeight::pack(changed);
  changed.add_(1);
  CHECK_FALSE(stale->fits(changed));
  CHECK_FALSE(t2t::CpuLinearWeight::pack(weight.to(torch::kDouble)));
  CHECK_THROWS(packed->apply(torch::randn({3, 25}), torch::Tensor(), false));
}
