// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "models/transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/t2t_model.h"
#include "tests/support/tensor_compare.h"

using t2t::FeatureInfo;
using t2t::HParams;
using t2t::Transformer;
using t2t::test::max_diff;

namespace {

constexpr int64_t kVocab = 50;
constexpr int64_t kHidden = 32;

HParams tiny(const std::string& set = "transformer_tiny") {
  HParams hp = t2t::hparams_registry().get(set)();
  hp.set("hidden_size", kHidden);
  hp.set("filter_size", 64);
  hp.set("num_heads", 2);
  hp.set("num_hidden_layers", 2);
  return hp;
}

FeatureInfo features(bool shared_vocabulary = false, int64_t input_vocab = kVocab) {
  return FeatureInfo{input_vocab, kVocab, shared_vocabulary};
}

std::shared_ptr<Transformer> make(const HParams& hp, const FeatureInfo& f = features()) {
  torch::manual_seed(1);
  auto model = std::make_shared<Transformer>(hp, f);
  model->eval();
  return model;
}

torch::Tensor ids(std::vector<std::vector<int64_t>> rows) {
  const int64_t width = static_cast<int64_t>(rows[0].size());
  auto out = torch::zeros({static_cast<int64_t>(rows.size()), width}, torch::kLong);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t c = 0; c < width; ++c) out[r][c] = rows[r][c];
  }
  return out;
}

int64_t parameter_count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// Runs decode_step over `targets` (teacher forcing) and stacks the logits:
// [batch, target_len, vocab].
torch::Tensor decode_incrementally(t2t::T2TModel& model, const torch::Tensor& inputs,
                                   const torch::Tensor& targets) {
  auto state = model.start_decoding(inputs);
  std::vector<torch::Tensor> steps;
  auto last = torch::zeros({targets.size(0)}, torch::kLong);
  for (int64_t t = 0; t < targets.size(1); ++t) {
    steps.push_back(model.decode_step(*state, last));
    last = targets.select(1, t).clone();
  }
  REQUIRE(state->length == targets.size(1));
  return torch::stack(steps, 1);
}

}  // namespace

TEST_CASE("timing signal follows T2T's formula", "[model]") {
  const int64_t channels = 32, half = channels / 2;
  auto signal = t2t::timing_signal_1d(10, channels);
  REQUIRE(signal.sizes() == torch::IntArrayRef({10, channels}));
  const double increment = std::log(10000.0) / (half - 1);
  for (int64_t i : {0, 1, 5, 15}) {
    const double rate = std::exp(-i * increment);
    CHECK(signal[3][i].item<double>() == Approx(std::sin(3 * rate)).margin(1e-5));
    CHECK(signal[3][half + i].item<double>() == Approx(std::cos(3 * rate)).margin(1e-5));
  }
  // Position 3, channel 0: sin(3); channel hidden/2: cos(3).
  CHECK(signal[3][0].item<double>() == Approx(std::sin(3.0)).margin(1e-6));
  CHECK(signal[3][half].item<double>() == Approx(std::cos(3.0)).margin(1e-6));
  // The last timescale is 1e4 exactly.
  CHECK(signal[7][half - 1].item<double>() == Approx(std::sin(7e-4)).margin(1e-6));
  // An offset start gives the same rows.
  CHECK(max_diff(t2t::timing_signal_1d(4, channels, 6), signal.narrow(0, 6, 4)) < 1e-6);
  // An odd channel count leaves the last channel zero.
  auto odd = t2t::timing_signal_1d(5, 7);
  CHECK(odd.size(1) == 7);
  CHECK(odd.select(1, 6).abs().max().item<double>() == 0.0);
}

TEST_CASE("transformer registers and builds through the model registry", "[model]") {
  REQUIRE(t2t::model_registry().contains("transformer"));
  auto model = t2t::model_registry().get("transformer")(tiny(), features());
  REQUIRE(model);
  model->eval();
  auto logits = model->forward(ids({{3, 4, 5, 1}, {6, 1, 0, 0}}), ids({{7, 8, 1}, {9, 1, 0}}));
  CHECK(logits.sizes() == torch::IntArrayRef({2, 3, kVocab}));
  CHECK(logits.scalar_type() == torch::kFloat);
  CHECK(torch::isfinite(logits).all().item<bool>());
}

TEST_CASE("transformer output shapes and layer counts", "[model]") {
  auto hp = tiny();
  hp.set("num_encoder_layers", 3);
  hp.set("num_decoder_layers", 1);
  auto model = make(hp, features(false, 40));
  auto inputs = torch::randint(1, 40, {3, 9}, torch::kLong);
  auto targets = torch::randint(1, kVocab, {3, 5}, torch::kLong);
  auto encoded = model->encode(inputs);
  CHECK(encoded.first.sizes() == torch::IntArrayRef({3, 9, kHidden}));
  CHECK(encoded.second.sizes() == torch::IntArrayRef({3, 9}));
  CHECK(model->forward(inputs, targets).sizes() == torch::IntArrayRef({3, 5, kVocab}));
  int encoder = 0, decoder = 0;
  for (const auto& item : model->named_parameters()) {
    if (item.key().rfind("encoder.", 0) == 0 &&
        item.key().find(".ffn.conv1.weight") != std::string::npos)
      ++encoder;
    if (item.key().rfind("decoder.", 0) == 0 &&
        item.key().find(".ffn.conv1.weight") != std::string::npos)
      ++decoder;
  }
  CHECK(encoder == 3);
  CHECK(decoder == 1);
}

TEST_CASE("transformer ignores input padding", "[model]") {
  auto model = make(tiny());
  torch::NoGradGuard no_grad;
  auto targets = ids({{7, 8, 9, 1}});
  auto base = model->forward(ids({{3, 4, 5, 1}}), targets);
  // More padding columns change nothing.
  auto padded = model->forward(ids({{3, 4, 5, 1, 0, 0, 0}}), targets);
  CHECK(max_diff(base, padded) < 1e-5);
  // Neither does a longer neighbour in the batch.
  auto batched = model->forward(ids({{3, 4, 5, 1, 0, 0}, {11, 12, 13, 14, 15, 1}}),
                                ids({{7, 8, 9, 1}, {2, 3, 4, 5}}));
  CHECK(max_diff(base, batched.narrow(0, 0, 1)) < 1e-5);
  // Whereas a real token does change them.
  auto changed = model->forward(ids({{3, 4, 6, 1}}), targets);
  CHECK(max_diff(base, changed) > 1e-4);
  // Id 0 embeds to zeros whatever its row holds.
  model->input_embedding()[0].normal_();
  CHECK(max_diff(base, model->forward(ids({{3, 4, 5, 1, 0, 0}}), targets)) < 1e-5);
  CHECK(model->encode(ids({{0, 0, 5}})).second[0][1].item<bool>());
}

TEST_CASE("forward_labelled gives forward's logits at the labelled positions", "[model]") {
  auto model = make(tiny());
  torch::NoGradGuard no_grad;
  const auto inputs = ids({{3, 4, 5, 1, 0}, {6, 7, 8, 9, 1}, {2, 1, 0, 0, 0}});
  const auto targets = ids({{7, 8, 1, 0}, {9, 10, 11, 1}, {1, 0, 0, 0}});
  const auto full = model->forward(inputs, targets);
  const auto labelled = model->forward_labelled(inputs, targets);
  REQUIRE(labelled.sizes() == torch::IntArrayRef({8, kVocab}));
  std::vector<torch::Tensor> want;
  for (int64_t b = 0; b < targets.size(0); ++b)
    for (int64_t t = 0; t < targets.size(1); ++t)
      if (targets[b][t].item<int64_t>() != 0) want.push_back(full[b][t]);
  CHECK(max_diff(torch::stack(want), labelled) < 1e-6);
  // The generic version (select from forward()) agrees.
  CHECK(max_diff(model->T2TModel::forward_labelled(inputs, targets), labelled) < 1e-6);
}

TEST_CASE("transformer decoder never sees the future", "[model]") {
  auto model = make(tiny());
  torch::NoGradGuard no_grad;
  auto inputs = ids({{3, 4, 5, 6, 1}});
  auto a = ids({{7, 8, 9, 10, 11, 1}});
  for (int64_t k = 0; k < a.size(1); ++k) {
    auto b = a.clone();
    b[0][k] = 20;
    auto la = model->forward(inputs, a);
    auto lb = model->forward(inputs, b);
    // Position t is predicted from targets before t, so positions <= k agree.
    CHECK(max_diff(la.narrow(1, 0, k + 1), lb.narrow(1, 0, k + 1)) < 1e-5);
    if (k + 1 < a.size(1)) CHECK(max_diff(la.narrow(1, k + 1, 1), lb.narrow(1, k + 1, 1)) > 1e-4);
  }
}

TEST_CASE("incremental decoding matches teacher forcing", "[model]") {
  const std::string set =
      GENERATE(std::string("transformer_tiny"), std::string("transformer_base_v1"));
  DYNAMIC_SECTION(set) {
    auto model = make(tiny(set));
    auto inputs = ids({{3, 4, 5, 6, 1, 0, 0}, {9, 8, 1, 0, 0, 0, 0}, {2, 3, 4, 5, 6, 7, 1}});
    // Longer than the first cache allocation, so the caches grow on the way.
    auto targets = torch::randint(2, kVocab, {3, 21}, torch::kLong);
    torch::Tensor expected;
    {
      torch::NoGradGuard no_grad;
      expected = model->forward(inputs, targets);
    }
    auto got = decode_incrementally(*model, inputs, targets);
    CHECK(got.sizes() == expected.sizes());
    CHECK(max_diff(got, expected) < 1e-4);
    CHECK_FALSE(got.requires_grad());
  }
}

TEST_CASE("reorder_state selects and drops sentences", "[model]") {
  auto model = make(tiny());
  auto inputs = ids({{3, 4, 5, 6, 1}, {9, 8, 1, 0, 0}, {2, 3, 4, 1, 0}});
  auto history = ids({{0, 7, 8}, {0, 9, 10}, {0, 11, 12}});  // previous ids per step

  auto state = model->start_decoding(inputs);
  for (int64_t t = 0; t < 2; ++t) model->decode_step(*state, history.select(1, t).clone());
  // Beam-style reordering with a duplicate, then a step.
  auto index = torch::tensor({2, 0, 0}, torch::kLong);
  model->reorder_state(*state, index);
  CHECK(state->batch_size() == 3);
  auto got = model->decode_step(*state, torch::tensor({5, 6, 7}, torch::kLong));

  auto fresh = model->start_decoding(inputs.index_select(0, index));
  auto fresh_history = history.index_select(0, index);
  for (int64_t t = 0; t < 2; ++t) model->decode_step(*fresh, fresh_history.select(1, t).clone());
  auto want = model->decode_step(*fresh, torch::tensor({5, 6, 7}, torch::kLong));
  CHECK(max_diff(got, want) < 1e-5);

  // Dropping finished sentences shrinks the state's rows. (In eval mode on
  // the CPU the self-attention caches keep their slots: rows read them
  // through a table; t2t/kernels/decode_attention.h.)
  model->reorder_state(*state, torch::tensor({1}, torch::kLong));
  CHECK(state->batch_size() == 1);
  CHECK(state->encoder_padding.size(0) == 1);
  for (const auto& layer : state->layers) {
    CHECK(layer.self_keys.size(0) >= 1);
    CHECK(layer.memory_values.size(0) == 1);
  }
  auto one = model->decode_step(*state, torch::tensor({6}, torch::kLong));
  model->reorder_state(*fresh, torch::tensor({1}, torch::kLong));
  CHECK(max_diff(one, model->decode_step(*fresh, torch::tensor({6}, torch::kLong))) < 1e-5);
}

TEST_CASE("embedding and softmax sharing", "[model]") {
  const int64_t matrix = kVocab * kHidden;
  auto hp = tiny();
  REQUIRE(hp.get_bool("shared_embedding_and_softmax_weights"));

  auto all_shared = make(hp, features(true));
  CHECK(all_shared->input_embedding().is_same(all_shared->target_embedding()));
  CHECK(all_shared->target_embedding().is_same(all_shared->softmax_weights()));

  // Same size, different vocabularies: inputs keep their own matrix.
  auto softmax_shared = make(hp, features(false));
  CHECK_FALSE(softmax_shared->input_embedding().is_same(softmax_shared->target_embedding()));
  CHECK(softmax_shared->target_embedding().is_same(softmax_shared->softmax_weights()));
  CHECK(parameter_count(*softmax_shared) - parameter_count(*all_shared) == matrix);

  // Vocabularies of different sizes: T2T unsets the sharing
  // (T2TModel.__init__), and so does t2t: three matrices.
  auto sized = make(hp, features(false, kVocab + 7));
  CHECK_FALSE(sized->target_embedding().is_same(sized->softmax_weights()));
  CHECK(sized->input_embedding().size(0) == kVocab + 7);
  CHECK(parameter_count(*sized) - parameter_count(*softmax_shared) == matrix + 7 * kHidden);
  // ... unless t2t's own hparam keeps the softmax tied to the targets.
  hp.set("shared_target_embedding_and_softmax_weights", true);
  auto sized_tied = make(hp, features(false, kVocab + 7));
  CHECK(sized_tied->target_embedding().is_same(sized_tied->softmax_weights()));
  CHECK_FALSE(sized_tied->input_embedding().is_same(sized_tied->target_embedding()));
  CHECK(parameter_count(*sized) - parameter_count(*sized_tied) == matrix);
  hp.set("shared_target_embedding_and_softmax_weights", false);

  hp.set("shared_embedding_and_softmax_weights", false);
  auto unshared = make(hp, features(true));
  CHECK_FALSE(unshared->target_embedding().is_same(unshared->softmax_weights()));
  CHECK_FALSE(unshared->input_embedding().is_same(unshared->target_embedding()));
  CHECK(parameter_count(*unshared) - parameter_count(*all_shared) == 2 * matrix);
}

TEST_CASE("symbol modality and initialisation follow T2T", "[model]") {
  auto model = make(tiny(), features(true));
  // N(0, hidden^-0.5) embeddings.
  auto spread = model->softmax_weights().std().item<double>();
  CHECK(spread == Approx(std::pow(kHidden, -0.5)).epsilon(0.1));
  // Dense kernels: uniform_unit_scaling with gain 1, i.e. |w| <= sqrt(6 / (in + out)).
  for (const auto& item : model->named_parameters()) {
    const auto& key = item.key();
    if (key.find("qkv.weight") != std::string::npos ||
        key.find("output.weight") != std::string::npos) {
      CHECK(item.value().abs().max().item<double>() <= std::sqrt(6.0 / (2 * kHidden)) + 1e-6);
    }
    if (key.find("conv1.weight") != std::string::npos) {
      CHECK(item.value().abs().max().item<double>() <= std::sqrt(6.0 / (kHidden + 64)) + 1e-6);
    }
    if (key.find("conv1.bias") != std::string::npos)
      CHECK(item.value().abs().max().item<double>() == 0);
    // Attention has no biases.
    CHECK(key.find("attention.qkv.bias") == std::string::npos);
    CHECK(key.find("attention.output.bias") == std::string::npos);
  }
}

TEST_CASE("post-norm transformer_base_v1 runs and has no final norm", "[model]") {
  auto v1 = make(tiny("transformer_base_v1"));
  auto v3 = make(tiny("transformer_base"));
  int final_v1 = 0, final_v3 = 0;
  for (const auto& item : v1->named_parameters())
    final_v1 += item.key().find("_final.") != std::string::npos;
  for (const auto& item : v3->named_parameters())
    final_v3 += item.key().find("_final.") != std::string::npos;
  CHECK(final_v1 == 0);
  CHECK(final_v3 == 4);  // encoder and decoder: scale and bias each
  // Both have one norm per sub-layer.
  CHECK(parameter_count(*v3) - parameter_count(*v1) == 4 * kHidden);
  v1->train();
  auto logits = v1->forward(ids({{3, 4, 5, 1}, {6, 1, 0, 0}}), ids({{7, 8, 1}, {9, 1, 0}}));
  CHECK(logits.sizes() == torch::IntArrayRef({2, 3, kVocab}));
  logits.sum().backward();
  for (const auto& p : v1->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(torch::isfinite(p.grad()).all().item<bool>());
  }
}

TEST_CASE("transformer dropout follows train and eval", "[model]") {
  auto model = make(tiny());
  auto inputs = ids({{3, 4, 5, 1}});
  auto targets = ids({{7, 8, 1}});
  torch::NoGradGuard no_grad;
  CHECK(max_diff(model->forward(inputs, targets), model->forward(inputs, targets)) == 0);
  model->train();
  CHECK(max_diff(model->forward(inputs, targets), model->forward(inputs, targets)) > 0);
}

TEST_CASE("transformer rejects hparams it cannot honour", "[model]") {
  auto hp = tiny();
  hp.set("layer_postprocess_sequence", "dax");
  CHECK_THROWS_AS(Transformer(hp, features()), t2t::Error);
  hp = tiny();
  hp.set("layer_preprocess_sequence", "an");
  CHECK_THROWS_AS(Transformer(hp, features()), t2t::Error);
  hp = tiny();
  hp.set("num_heads", 3);
  CHECK_THROWS_AS(Transformer(hp, features()), t2t::Error);
  hp = tiny();
  hp.set("ffn_layer", "conv_relu_conv");
  CHECK_THROWS_AS(Transformer(hp, features()), t2t::Error);
  CHECK_THROWS_AS(Transformer(tiny(), FeatureInfo{40, kVocab, true}), t2t::Error);
}

TEST_CASE("general letter sequences: zero-gated residual", "[model]") {
  auto hp = tiny();
  hp.set("layer_postprocess_sequence", "dz");
  auto model = make(hp);
  auto logits = model->forward(ids({{3, 4, 1}}), ids({{5, 1}}));
  CHECK(torch::isfinite(logits).all().item<bool>());
  int gates = 0;
  for (const auto& item : model->named_parameters())
    gates += item.key().find(".gate_0") != std::string::npos;
  CHECK(gates == 2 * 2 + 3 * 2);  // two per encoder layer, three per decoder layer
}

TEST_CASE("under CPU bf16 autocast the matrix products run in bf16", "[model]") {
  auto model = make(tiny());
  auto in = ids({{5, 6, 7, 1}});
  auto out = ids({{8, 9, 1}});
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, true);
  auto logits = model->forward(in, out);
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  CHECK(logits.scalar_type() == at::kBFloat16);
  CHECK(model->forward(in, out).scalar_type() == at::kFloat);
}

TEST_CASE("attention dropout on the CPU keeps attention's masks", "[model]") {
  // A rate so small that no weight is dropped: training mode then runs the
  // CPU's own dropout path (explicit scores, softmax, t2t::dropout) and
  // must give what scaled_dot_product_attention gives in eval mode.
  HParams hp = tiny();
  hp.set("attention_dropout", 1e-10);
  hp.set("layer_prepostprocess_dropout", 0.0);
  hp.set("relu_dropout", 0.0);
  auto model = make(hp);
  const auto inputs = ids({{3, 4, 5, 1, 0, 0}, {6, 7, 8, 9, 10, 1}});
  const auto targets = ids({{7, 8, 1, 0}, {9, 10, 11, 1}});
  torch::NoGradGuard no_grad;
  const auto want = model->forward(inputs, targets);
  model->train();
  const auto got = model->forward(inputs, targets);
  CHECK(max_diff(got, want) < 1e-5);
}

TEST_CASE("attention of a few queries gives scaled_dot_product_attention's result", "[model]") {
  // The GPU's decoding steps take attend_few_queries; it runs on the CPU
  // too, so that its arithmetic is checked here, masks and bf16 included.
  torch::manual_seed(3);
  const double scale = 1.0 / std::sqrt(8.0);
  const auto mask = torch::tensor({1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0}, torch::kBool)
                        .view({3, 1, 1, 5});
  const auto bf = [](const torch::Tensor& t) { return t.to(torch::kBFloat16); };
  for (const int64_t queries : {1, 4}) {
    INFO(queries << " queries");
    const auto q = torch::randn({3, 2, queries, 8}), k = torch::randn({3, 2, 5, 8}),
               v = torch::randn({3, 2, 5, 6});
    CHECK(max_diff(t2t::attend_few_queries(q, k, v, torch::Tensor(), scale),
                   torch::scaled_dot_product_attention(q, k, v, {}, 0.0, false, scale)) < 1e-5);
    const auto want = torch::scaled_dot_product_attention(q, k, v, mask, 0.0, false, scale);
    CHECK(max_diff(t2t::attend_few_queries(q, k, v, mask, scale), want) < 1e-5);
    const auto got = t2t::attend_few_queries(bf(q), bf(k), bf(v), mask, scale);
    CHECK(got.scalar_type() == torch::kBFloat16);
    CHECK(max_diff(got.to(torch::kFloat), want) < 3e-2);
  }
}
