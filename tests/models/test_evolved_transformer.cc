// The Evolved Transformer (models/evolved_transformer/): T2T's sets, its
// cells' shapes and parameters, and its decoding: incremental steps (two
// self-attention caches and the causal convolutions' windows) equal teacher
// forcing, beams reorder every cache, and padding changes nothing. Its
// numbers against T2T's own: tests/tools/test_t2t_equivalence.cc.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>

#include "models/evolved_transformer/evolved_transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/t2t_model.h"
#include "tests/support/tensor_compare.h"

using t2t::test::max_diff;

namespace {

constexpr int64_t kVocab = 40;

t2t::HParams small_set() {
  t2t::HParams hp = t2t::hparams_registry().get("evolved_transformer_tiny")();
  hp.set("hidden_size", 16);
  hp.set("num_heads", 2);
  hp.set("num_encoder_layers", 2);
  hp.set("num_decoder_layers", 2);
  return hp;
}

std::shared_ptr<t2t::T2TModel> make(const t2t::HParams& hp, uint64_t seed = 1) {
  torch::manual_seed(seed);
  auto model =
      t2t::model_registry().get("evolved_transformer")(hp, t2t::FeatureInfo{kVocab, kVocab, false});
  model->eval();
  return model;
}

torch::Tensor ids(std::initializer_list<std::initializer_list<int64_t>> rows) {
  std::vector<torch::Tensor> out;
  for (const auto& r : rows) out.push_back(torch::tensor(std::vector<int64_t>(r), torch::kLong));
  return torch::stack(out);
}

// Logits of every target position by decode_step, fed the targets.
torch::Tensor decode_incrementally(t2t::T2TModel& model, const torch::Tensor& inputs,
                                   const torch::Tensor& targets) {
  auto state = model.start_decoding(inputs);
  auto last = torch::zeros({inputs.size(0)}, torch::kLong);
  std::vector<torch::Tensor> steps;
  for (int64_t t = 0; t < targets.size(1); ++t) {
    steps.push_back(model.decode_step(*state, last));
    last = targets.select(1, t).clone();
  }
  return torch::stack(steps, 1);
}

}  // namespace

TEST_CASE("evolved transformer sets are T2T's", "[model][evolved]") {
  auto& sets = t2t::hparams_registry();
  const auto tiny = sets.get("evolved_transformer_tiny")();
  CHECK(tiny.get_int("num_encoder_layers") == 3);
  CHECK(tiny.get_int("num_decoder_layers") == 4);
  CHECK(tiny.get_int("hidden_size") == 128);
  // transformer_tiny's constant 2 over the square root of its 8,000
  // warm-up steps, then no warm-up: a cosine from the first step.
  CHECK(tiny.get_float("learning_rate_constant") == Approx(2.0 / std::sqrt(8000.0)));
  CHECK(tiny.get_string("learning_rate_schedule") == "constant*single_cycle_cos_decay");
  const auto base = sets.get("evolved_transformer_base")();
  CHECK(base.get_int("hidden_size") == 512);
  CHECK(base.get_string("learning_rate_schedule") ==
        "constant*linear_warmup*single_cycle_cos_decay*rsqrt_hidden_size");
  CHECK(sets.get("evolved_transformer_big")().get_int("hidden_size") == 1024);
  const auto deep = sets.get("evolved_transformer_deep")();
  CHECK(deep.get_int("num_encoder_layers") == 9);
  CHECK(deep.get_int("num_decoder_layers") == 10);
  CHECK(deep.get_int("hidden_size") == 640);
}

TEST_CASE("evolved transformer cells have T2T's parameters", "[model][evolved]") {
  auto model = make(small_set());
  auto params = model->named_parameters();
  // Encoder: a 4x-wide dense branch beside a 3-wide convolution to half the
  // width, then a separable 9-wide one over the wide branch.
  CHECK(params["encoder.0.conv_left.weight"].sizes() == torch::IntArrayRef({64, 16}));
  CHECK(params["encoder.0.conv_right.weight"].sizes() == torch::IntArrayRef({8, 16, 3}));
  CHECK(params["encoder.0.conv_separable.depthwise"].sizes() == torch::IntArrayRef({64, 1, 9}));
  CHECK(params["encoder.0.conv_separable.pointwise"].sizes() == torch::IntArrayRef({8, 64, 1}));
  CHECK(params["encoder.0.conv_mid_pre.layer_norm_0.weight"].size(0) == 64);
  CHECK(params.contains("encoder.1.self_attention.qkv.weight"));
  // Decoder: 11- and 7-wide separable convolutions, a 2x-wide norm, the
  // wide attention's and the two encoder attentions' projections.
  CHECK(params["decoder.0.conv_left.depthwise"].sizes() == torch::IntArrayRef({16, 1, 11}));
  CHECK(params["decoder.0.conv_left.pointwise"].sizes() == torch::IntArrayRef({32, 16, 1}));
  CHECK(params["decoder.0.conv_right.pointwise"].sizes() == torch::IntArrayRef({8, 16, 1}));
  CHECK(params["decoder.0.conv_final.depthwise"].sizes() == torch::IntArrayRef({32, 1, 7}));
  CHECK(params["decoder.0.dense_mid_pre.layer_norm_0.weight"].size(0) == 64);
  CHECK(params.contains("decoder.1.wide_attention.qkv.weight"));
  CHECK(params.contains("decoder.1.first_memory_attention.kv.weight"));
  CHECK(params.contains("decoder.1.second_memory_attention.kv.weight"));
  CHECK_FALSE(params.contains("encoder.2.glu_values.weight"));
  CHECK_FALSE(params.contains("decoder.2.glu_values.weight"));

  t2t::HParams without = small_set();
  without.add("et_encoder_self_attention", false);
  CHECK_FALSE(make(without)->named_parameters().contains("encoder.0.self_attention.qkv.weight"));
}

TEST_CASE("evolved transformer: incremental decoding matches teacher forcing",
          "[model][evolved]") {
  auto model = make(small_set());
  // Longer than every convolution's window, and than the first caches.
  const auto inputs = ids({{3, 4, 5, 6, 1, 0, 0}, {9, 8, 1, 0, 0, 0, 0}, {2, 3, 4, 5, 6, 7, 1}});
  const auto targets = torch::randint(2, kVocab, {3, 19}, torch::kLong);
  torch::Tensor expected;
  {
    torch::NoGradGuard no_grad;
    expected = model->forward(inputs, targets);
  }
  const auto got = decode_incrementally(*model, inputs, targets);
  REQUIRE(got.sizes() == expected.sizes());
  CHECK(max_diff(got, expected) < 1e-4);
}

TEST_CASE("evolved transformer: reordering beams reorders every cache", "[model][evolved]") {
  auto model = make(small_set());
  const auto inputs = ids({{3, 4, 5, 6, 1}, {9, 8, 1, 0, 0}, {2, 3, 4, 1, 0}});
  const auto history = torch::randint(2, kVocab, {3, 13}, torch::kLong);
  history.select(1, 0).fill_(0);
  auto state = model->start_decoding(inputs);
  for (int64_t t = 0; t < 12; ++t) model->decode_step(*state, history.select(1, t).clone());
  const auto index = torch::tensor({2, 0, 0}, torch::kLong);
  model->reorder_state(*state, index);
  const auto got = model->decode_step(*state, history.select(1, 12).index_select(0, index));

  auto fresh = model->start_decoding(inputs.index_select(0, index));
  const auto reordered = history.index_select(0, index);
  torch::Tensor want;
  for (int64_t t = 0; t <= 12; ++t) want = model->decode_step(*fresh, reordered.select(1, t).clone());
  CHECK(max_diff(got, want) < 1e-5);

  // Beams made from each sentence share its encoder-decoder keys: a step
  // on them equals the same rows decoded apart.
  const auto beams = torch::tensor({0, 0, 1, 1, 2, 2}, torch::kLong);
  auto grown = model->start_decoding(inputs);
  auto apart = model->start_decoding(inputs.index_select(0, beams));
  for (int64_t t = 0; t < 3; ++t) model->decode_step(*grown, history.select(1, t).clone());
  for (int64_t t = 0; t < 3; ++t)
    model->decode_step(*apart, history.index_select(0, beams).select(1, t).clone());
  model->reorder_state(*grown, beams);
  const auto last = torch::tensor({5, 6, 7, 8, 9, 10}, torch::kLong);
  CHECK(max_diff(model->decode_step(*grown, last), model->decode_step(*apart, last)) < 1e-5);
  const auto within = torch::tensor({1, 0, 3, 3, 4, 5}, torch::kLong);  // beams reordered
  model->reorder_state(*grown, within);
  model->reorder_state(*apart, within);
  CHECK(max_diff(model->decode_step(*grown, last), model->decode_step(*apart, last)) < 1e-5);

  // Dropping sentences shrinks the state.
  model->reorder_state(*state, torch::tensor({1}, torch::kLong));
  CHECK(state->batch_size() == 1);
  const auto one = model->decode_step(*state, torch::tensor({6}, torch::kLong));
  model->reorder_state(*fresh, torch::tensor({1}, torch::kLong));
  CHECK(max_diff(one, model->decode_step(*fresh, torch::tensor({6}, torch::kLong))) < 1e-5);
}

TEST_CASE("evolved transformer: padding and the future stay unseen", "[model][evolved]") {
  auto model = make(small_set());
  torch::NoGradGuard no_grad;
  const auto targets = ids({{7, 8, 9, 10, 11, 12, 1}});
  // The encoder's convolutions read the padding's neighbours: masked.
  const auto base = model->forward(ids({{3, 4, 5, 1}}), targets);
  const auto padded = model->forward(ids({{3, 4, 5, 1, 0, 0, 0}}), targets);
  CHECK(max_diff(base, padded) < 1e-5);
  // The decoder's convolutions are causal.
  auto changed = targets.clone();
  changed[0][4] = 20;
  const auto other = model->forward(ids({{3, 4, 5, 1}}), changed);
  CHECK(max_diff(base.narrow(1, 0, 5), other.narrow(1, 0, 5)) < 1e-5);
  CHECK(max_diff(base.narrow(1, 5, 2), other.narrow(1, 5, 2)) > 1e-4);
}

TEST_CASE("evolved transformer: every parameter learns", "[model][evolved]") {
  auto model = make(small_set());
  model->train();
  const auto inputs = ids({{3, 4, 5, 6, 1}, {9, 8, 1, 0, 0}});
  const auto targets = ids({{7, 8, 9, 1}, {10, 11, 1, 0}});
  const auto logits = model->forward_labelled(inputs, targets);
  CHECK(logits.size(0) == 7);
  torch::nn::functional::cross_entropy(logits, targets.reshape({-1}).index_select(
                                                   0, t2t::labelled_positions(targets)))
      .backward();
  for (const auto& p : model->named_parameters()) {
    INFO(p.key());
    REQUIRE(p.value().grad().defined());
    CHECK(p.value().grad().abs().sum().item<double>() > 0);
  }
}

TEST_CASE("evolved transformer: hparams it cannot honour are refused", "[model][evolved]") {
  t2t::HParams odd = small_set();
  odd.set("hidden_size", 15);
  odd.set("num_heads", 3);
  CHECK_THROWS_WITH(make(odd), Catch::Contains("even hidden_size"));
  t2t::HParams frozen = small_set();
  frozen.add("num_trainable_top_decoder_layers", int64_t{1});
  CHECK_THROWS_WITH(make(frozen), Catch::Contains("num_trainable_top_decoder_layers=1"));
  t2t::HParams acausal = small_set();
  acausal.put("causal_decoder_self_attention", false);
  CHECK_THROWS_WITH(make(acausal), Catch::Contains("causal"));
}
