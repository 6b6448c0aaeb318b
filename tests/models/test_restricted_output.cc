// A Transformer's decoding steps restricted to some target ids (a lexical
// shortlist's columns): the logits of those ids, as the whole projection
// gives them, from float32 (plain and packed for t2t's kernels) and int8.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <vector>

#include "models/transformer.h"
#include "t2t/core/hparams.h"
#include "t2t/kernels/cpu_linear.h"
#include "t2t/kernels/int8_linear.h"
#include "t2t/kernels/int8_panels.h"
#include "t2t/model/model_registry.h"
#include "t2t/search/beam_search.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

namespace {

std::shared_ptr<t2t::Transformer> small_transformer() {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", int64_t{32});
  hp.set("filter_size", int64_t{64});
  hp.set("num_heads", int64_t{2});
  torch::manual_seed(17);
  auto model = std::make_shared<t2t::Transformer>(hp, t2t::FeatureInfo{50, 90, false});
  model->eval();
  return model;
}

// Steps a restricted and a whole state side by side on the same ids and
// compares the restricted logits with the whole ones' columns.
void compare_steps(t2t::Transformer& model, bool exact) {
  torch::NoGradGuard no_grad;
  const auto inputs = torch::tensor({{5, 9, 11, 1}, {7, 1, 0, 0}}, torch::kLong);
  const std::vector<int64_t> ids = {0, 1, 2, 3, 17, 18, 40, 63, 64, 65, 80, 89};
  const auto index = torch::tensor(ids, torch::kLong);
  auto whole = model.start_decoding(inputs);
  auto restricted = model.start_decoding(inputs);
  REQUIRE(model.restrict_output(*restricted, index));
  auto last = torch::zeros({2}, torch::kLong);
  for (int step = 0; step < 4; ++step) {
    const auto full = model.decode_step(*whole, last);
    const auto some = model.decode_step(*restricted, last);
    REQUIRE(some.sizes() == torch::IntArrayRef({2, static_cast<int64_t>(ids.size())}));
    const auto want = full.index_select(1, index);
    INFO("step " << step);
    if (exact)
      CHECK(torch::equal(some, want));
    else
      CHECK(torch::allclose(some, want, 1e-5, 1e-5));
    last = torch::tensor({ids[4 + step], ids[5 + step]}, torch::kLong);
  }
}

}  // namespace

TEST_CASE("a restricted Transformer step gives the whole projection's logits of its ids",
          "[shortlist]") {
  auto model = small_transformer();
  SECTION("float32, unpacked") { compare_steps(*model, false); }
  SECTION("float32 on t2t's kernels: the same chain of products, the same logits") {
    if (!t2t::CpuLinearWeight::runs_here(t2t::CpuLinearKernel::avx2))
      T2T_SKIP("this CPU has neither AVX-512 nor AVX2 with FMA");
    model->pack_for_inference();
    compare_steps(*model, true);
  }
  SECTION("int8 on t2t's kernels: each output as the whole matrix computes it") {
    if (!t2t::int8_kernel_runs(t2t::Int8Kernel::best))
      T2T_SKIP("this CPU runs none of t2t's int8 kernels");
    model->quantize_int8();
    compare_steps(*model, true);
  }
}

TEST_CASE("an int8 weight's chosen outputs compute what they compute in the whole weight",
          "[shortlist][int8]") {
  for (const auto kernel : {t2t::Int8Kernel::vnni, t2t::Int8Kernel::avx2}) {
    if (!t2t::int8_kernel_runs(kernel)) continue;
    torch::manual_seed(3);
    const auto weight = torch::randn({150, 37});
    const auto bias = torch::randn({150});
    const auto packed =
        t2t::Int8PanelWeight::pack(t2t::quantize_rows(weight, "w"), bias, kernel);
    REQUIRE(packed);
    const auto ids = torch::tensor({149, 0, 64, 65, 17, 100}, torch::kLong);
    const auto some = packed->select_outputs(ids);
    const auto x = torch::randn({5, 37});
    INFO(packed->kernel());
    CHECK(torch::equal(some->apply(x), packed->apply(x).index_select(1, ids)));
    CHECK_THROWS(packed->select_outputs(torch::tensor({150}, torch::kLong)));
  }
}

TEST_CASE("a restricted Transformer searches only its columns", "[shortlist]") {
  auto model = small_transformer();
  model->pack_for_inference();
  const auto inputs = torch::tensor({{5, 9, 11, 1}, {7, 1, 0, 0}}, torch::kLong);
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < 90; id += 3) ids.push_back(id);
  ids.insert(ids.begin() + 1, 1);
  const t2t::OutputColumns columns(ids, 90);
  t2t::SearchOptions options;
  options.extra_length = 5;
  const auto got = t2t::beam_search(*model, inputs, options, nullptr, {}, {}, columns);
  for (const auto& sentence : got)
    for (const auto& h : sentence)
      for (int64_t id : h.ids) CHECK(columns.column(id) >= 0);
}
