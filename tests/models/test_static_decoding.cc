// Decoding at static shapes (models/static_decoding.h), the form a GPU
// captures into CUDA graphs: run here on the CPU without capturing, its
// steps and searches must equal the usual ones up to rounding, across
// batches that reuse the arena, grow it, pad rows and drop sentences.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "models/static_decoding.h"
#include "models/transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/search/beam_search.h"
#include "t2t/translate/model_loading.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/random_batch.h"
#include "tests/support/test_util.h"

using t2t::SearchOptions;
using t2t::test::padded_ids;

namespace {

std::shared_ptr<t2t::Transformer> small_transformer(const std::string& set, uint64_t seed) {
  t2t::HParams hp = t2t::hparams_registry().get(set)();
  hp.set("hidden_size", 32);
  hp.set("filter_size", 64);
  hp.set("num_heads", 2);
  torch::manual_seed(seed);
  auto model = std::make_shared<t2t::Transformer>(hp, t2t::FeatureInfo{24, 24, false});
  model->eval();
  return model;
}

// `count` sources of 1 to `longest` ids in [2, 24) then EOS, padded.
torch::Tensor sources(int64_t count, int64_t longest, uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<std::vector<int64_t>> rows;
  for (int64_t s = 0; s < count; ++s) {
    const int64_t n = 1 + torch::randint(longest, {1}).item<int64_t>();
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < n; ++i) ids.push_back(torch::randint(2, 24, {1}).item<int64_t>());
    ids.push_back(t2t::kEosId);
    rows.push_back(ids);
  }
  return padded_ids(rows);
}

void check_same_results(const std::vector<std::vector<t2t::Hypothesis>>& got,
                        const std::vector<std::vector<t2t::Hypothesis>>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t s = 0; s < want.size(); ++s) {
    INFO("sentence " << s);
    REQUIRE(got[s].size() == want[s].size());
    for (size_t h = 0; h < want[s].size(); ++h) {
      CHECK(got[s][h].ids == want[s][h].ids);
      CHECK(got[s][h].finished == want[s][h].finished);
      CHECK(got[s][h].score == Approx(want[s][h].score).epsilon(1e-4));
    }
  }
}

}  // namespace

TEST_CASE("static shapes: sentences and lengths round up to few buckets", "[static_decoding]") {
  const std::vector<int64_t> want{1, 2, 3, 4, 6, 6, 8, 8, 12, 12, 12, 12, 16};
  for (int64_t n = 1; n <= 13; ++n) CHECK(t2t::sentence_bucket(n) == want[n - 1]);
  CHECK(t2t::sentence_bucket(17) == 24);
  CHECK(t2t::sentence_bucket(25) == 32);
  CHECK(t2t::sentence_bucket(64) == 64);
  CHECK(t2t::sentence_bucket(65) == 96);
  CHECK(t2t::length_bucket(1) == 16);
  CHECK(t2t::length_bucket(16) == 16);
  CHECK(t2t::length_bucket(17) == 32);
  CHECK(t2t::length_bucket(100) == 128);
}

TEST_CASE("static shapes: each step's logits equal the usual step's, whatever the reordering",
          "[static_decoding]") {
  // Relative positions read the step's position on the device.
  const std::string set =
      GENERATE(std::string("transformer_tiny"), std::string("transformer_relative_tiny"));
  INFO(set);
  auto model = small_transformer(set, 11);
  auto fixed = small_transformer(set, 11);
  fixed->set_static_decoding(true, false);
  const auto inputs = sources(3, 6, 5);
  torch::NoGradGuard no_grad;
  auto a = model->start_decoding(inputs);
  auto b = fixed->start_decoding(inputs);
  // Rows as a search moves them, and as it never does: beams made, rows
  // reordered across sentences (no beam grouping), rows dropped and
  // duplicated, with enough steps to outgrow the first position bucket.
  const std::vector<std::vector<int64_t>> reorders{
      {0, 0, 1, 1, 2, 2}, {1, 0, 3, 2, 5, 4}, {4, 5, 2, 3}, {3, 0, 2},
      {2, 2, 1, 0, 1},    {0, 1, 2, 3, 4},    {4, 3},       {0, 1, 1, 0}};
  torch::Tensor last = torch::zeros({3}, torch::kLong);
  for (int64_t step = 0; step < 20; ++step) {
    INFO("step " << step);
    const auto want = model->decode_step(*a, last);
    const auto got = fixed->decode_step(*b, last);
    REQUIRE(got.sizes() == want.sizes());
    CHECK(torch::allclose(got, want, 1e-4, 1e-4));
    const auto& order = reorders[step % reorders.size()];
    std::vector<int64_t> index;
    for (int64_t r : order) index.push_back(std::min<int64_t>(r, got.size(0) - 1));
    const auto idx = torch::tensor(index, torch::kLong);
    model->reorder_state(*a, idx);
    fixed->reorder_state(*b, idx);
    last = want.argmax(-1).index_select(0, idx);
  }
}

TEST_CASE("static shapes: searches equal the usual ones, batch after batch on one arena",
          "[static_decoding]") {
  for (const std::string set :
       {"transformer_tiny", "transformer_base_v1", "transformer_relative_tiny"}) {
    INFO(set);
    auto model = small_transformer(set, 3);
    auto fixed = small_transformer(set, 3);
    fixed->set_static_decoding(true, false);
    SearchOptions o;
    o.extra_length = 20;  // past the first position bucket of 16
    // Batches of every kind: a padded sentence bucket (7 of 8), one
    // sentence, a longer source than the arena has seen, more sentences.
    for (const auto& [count, longest, beam] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {7, 5, 4}, {1, 3, 4}, {5, 20, 4}, {12, 8, 2}, {6, 4, 1}}) {
      INFO(count << " sentences of up to " << longest << " ids, beam " << beam);
      o.beam_size = beam;
      const auto inputs = sources(count, longest, count * 31 + longest);
      t2t::SearchStats usual, static_stats;
      const auto want = t2t::beam_search(*model, inputs, o, &usual);
      const auto got = t2t::beam_search(*fixed, inputs, o, &static_stats);
      check_same_results(got, want);
      CHECK(static_stats.row_steps == usual.row_steps);
    }
    // return_beams: every hypothesis, and sentences that run until all
    // their beams are settled.
    o.beam_size = 3;
    o.num_return = 3;
    o.stop_early = false;
    const auto inputs = sources(4, 6, 99);
    check_same_results(t2t::beam_search(*fixed, inputs, o), t2t::beam_search(*model, inputs, o));
  }
}

TEST_CASE("static shapes: graphs are refused on a CPU, and by models without them",
          "[static_decoding]") {
  auto model = small_transformer("transformer_tiny", 1);
  model->set_static_decoding(true, true);
  CHECK_THROWS_WITH(model->start_decoding(sources(2, 3, 1)),
                    Catch::Contains("cuda_graphs captures decoding steps on a GPU") &&
                        Catch::Contains("device=cuda"));
  // Off again: the usual decoding.
  model->set_static_decoding(false, false);
  CHECK_NOTHROW(model->start_decoding(sources(2, 3, 1)));
  CHECK_THROWS_WITH(t2t::check_cuda_graphs(true, torch::kCPU),
                    Catch::Contains("cuda_graphs captures") && Catch::Contains("device=cuda"));
  CHECK_NOTHROW(t2t::check_cuda_graphs(false, torch::kCPU));
}

TEST_CASE("t2t-decoder and t2t-serve refuse --cuda_graphs on a CPU, naming the flag",
          "[static_decoding][e2e]") {
  for (const std::string tool : {"t2t-decoder", "t2t-serve"}) {
    const auto r = t2t::test::run_command(
        "./" + tool + " --problem=translate_enzh_sample --model=transformer "
        "--hparams_set=transformer_tiny --data_dir=/nonexistent --output_dir=/nonexistent "
        "--device=cpu --cuda_graphs");
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--cuda_graphs captures decoding steps on a GPU"));
  }
}
