// int8 inference: the int8 linear op against float32, the Dense layer's
// switch, and a quantized Transformer against the float one.
// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <memory>
#include <utility>
#include <vector>

#include "models/dense.h"
#include "t2t/kernels/int8_linear.h"
#include "t2t/kernels/int8_panels.h"
#include "models/transformer.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/search/beam_search.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/int8_checkpoint.h"
#include "t2t/translate/model_loading.h"
#include "t2t/model/skip_init.h"
#include "t2t/model/model_registry.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

namespace {

// The largest error relative to the largest output: int8 keeps about two
// significant digits of each weight and activation.
double relative_error(const torch::Tensor& got, const torch::Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

// A Transformer small enough to build in a blink, for the int8 checkpoint
// tests.
t2t::HParams small_hparams() {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", int64_t{32});
  hp.set("filter_size", int64_t{64});
  hp.set("num_heads", int64_t{2});
  return hp;
}

// `set` 64 wide on 60-id vocabularies, seeded and in eval mode, for the
// tests of a whole quantized Transformer.
std::shared_ptr<t2t::Transformer> wide_model(t2t::HParams hp) {
  hp.set("hidden_size", int64_t{64});
  hp.set("filter_size", int64_t{128});
  hp.set("num_heads", int64_t{4});
  torch::manual_seed(7);
  auto model = std::make_shared<t2t::Transformer>(hp, t2t::FeatureInfo{60, 60, false});
  model->eval();
  return model;
}

// Five sources of 8 ids then EOS, and five targets of 7 ids, for wide_model.
std::pair<torch::Tensor, torch::Tensor> random_pairs() {
  const auto inputs = torch::randint(2, 60, {5, 9}, torch::kLong);
  inputs.select(1, 8).fill_(t2t::kEosId);
  return {inputs, torch::randint(2, 60, {5, 7}, torch::kLong)};
}

}  // namespace

TEST_CASE("the int8 linear op follows float32 within quantization error", "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  torch::manual_seed(3);
  for (const int64_t out : {8, 96, 1000}) {
    const auto weight = torch::randn({out, 64}) * 0.1;
    const auto bias = torch::randn({out});
    const auto x = torch::randn({3, 5, 64});
    const t2t::Int8Linear with_bias(weight, bias, "test");
    const t2t::Int8Linear without(weight, torch::Tensor(), "test");
    CHECK(with_bias.in_features() == 64);
    CHECK(with_bias.out_features() == out);
    const auto got = with_bias(x);
    REQUIRE(got.sizes() == torch::IntArrayRef({3, 5, out}));
    INFO("out " << out);
    CHECK(relative_error(got, torch::linear(x, weight, bias)) < 0.03);
    CHECK(relative_error(without(x), torch::linear(x, weight)) < 0.03);
    // Rows are quantized on their own: a row 1000 times larger costs the
    // others nothing.
    auto skewed = weight.clone();
    skewed[0] *= 1000;
    const t2t::Int8Linear per_row(skewed, torch::Tensor(), "test");
    const auto want = torch::linear(x, skewed);
    CHECK(relative_error(per_row(x).narrow(-1, 1, out - 1), want.narrow(-1, 1, out - 1)) < 0.03);
  }
  // A strided input and an empty batch.
  const auto weight = torch::randn({16, 32});
  const t2t::Int8Linear op(weight, torch::Tensor(), "test");
  const auto wide = torch::randn({4, 64});
  const auto strided = wide.narrow(1, 0, 32);
  CHECK(relative_error(op(strided), torch::linear(strided, weight)) < 0.03);
  CHECK(op(torch::zeros({0, 32})).sizes() == torch::IntArrayRef({0, 16}));
}

TEST_CASE("the int8 linear op refuses what it cannot take, naming it", "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  CHECK_THROWS_WITH(t2t::Int8Linear(torch::randn({4, 4}, torch::kDouble), {}, "decoder.ffn"),
                    Catch::Contains("decoder.ffn") && Catch::Contains("float32"));
  CHECK_THROWS_WITH(t2t::Int8Linear(torch::randn({4}), {}, "layer x"),
                    Catch::Contains("layer x"));
  const t2t::Int8Linear op(torch::randn({4, 8}), {}, "test");
  CHECK_THROWS_WITH(op(torch::randn({2, 7})), Catch::Contains("8 inputs"));
  CHECK_THROWS_WITH(op(torch::randn({2, 8}, torch::kDouble)), Catch::Contains("float32"));
}

TEST_CASE("a Dense layer switches to int8 and back, keeping its parameters", "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  torch::manual_seed(5);
  t2t::Dense dense(torch::nn::LinearOptions(32, 24));
  const auto x = torch::randn({6, 32});
  const auto float_out = dense->forward(x).detach();
  const auto names = dense->named_parameters().keys();
  dense->quantize_int8("dense");
  CHECK(dense->quantized());
  const auto int8_out = dense->forward(x);
  CHECK_FALSE(torch::equal(int8_out, float_out));
  CHECK(relative_error(int8_out, float_out) < 0.03);
  CHECK(dense->named_parameters().keys() == names);
  dense->dequantize();
  CHECK(torch::equal(dense->forward(x).detach(), float_out));
}

TEST_CASE("a quantized Dense layer can free its float weight and stays int8", "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  torch::manual_seed(6);
  t2t::Dense dense(torch::nn::LinearOptions(32, 24));
  const auto x = torch::randn({6, 32});
  CHECK_THROWS_WITH(dense->release_float_weight(), Catch::Contains("not quantized"));
  dense->quantize_int8("dense");
  const auto int8_out = dense->forward(x);
  dense->release_float_weight();
  CHECK(dense->weight.numel() == 0);
  CHECK(torch::equal(dense->forward(x), int8_out));
  CHECK_THROWS_WITH(dense->dequantize(), Catch::Contains("released"));
  CHECK(dense->quantized());
}

TEST_CASE("a quantized Transformer decodes close to the float one", "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  auto model = wide_model(t2t::hparams_registry().get("transformer_tiny")());
  const auto [inputs, targets] = random_pairs();
  torch::NoGradGuard no_grad;
  const auto float_logits = model->forward(inputs, targets);
  t2t::SearchOptions search;
  search.beam_size = 1;
  search.extra_length = 6;
  const auto float_ids = t2t::beam_search(*model, inputs, search);

  CHECK_FALSE(model->quantized());
  CHECK(model->start_decoding(inputs)->layers[0].memory_keys.scalar_type() == torch::kFloat);
  model->quantize_int8();
  CHECK(model->quantized());
  const auto int8_logits = model->forward(inputs, targets);
  CHECK_FALSE(torch::equal(int8_logits, float_logits));
  CHECK(relative_error(int8_logits, float_logits) < 0.05);
  // Step by step, the int8 model's attention caches are bfloat16 and its
  // logits stay those of the whole sequence at once.
  const auto state = model->start_decoding(inputs);
  for (const auto& layer : state->layers) {
    CHECK(layer.memory_keys.scalar_type() == torch::kBFloat16);
    CHECK(layer.memory_values.scalar_type() == torch::kBFloat16);
  }
  const auto whole = int8_logits.reshape({5, 7, -1});
  for (int64_t t = 0; t < 7; ++t) {
    const auto last = t == 0 ? torch::zeros({5}, torch::kLong) : targets.select(1, t - 1);
    const auto step = model->decode_step(*state, last);
    INFO("position " << t);
    // Within what quantizing the activations allows: per row with t2t's
    // AVX-512 VNNI kernel (under 2%), per call through FBGEMM elsewhere,
    // where a step's rows get other scales than the whole sequence's
    // (2.6% measured on an AVX2 machine).
    CHECK(relative_error(step, whole.select(1, t)) < 0.035);
  }
  CHECK(state->layers[0].self_keys.scalar_type() == torch::kBFloat16);
  // Cached decoding runs through the same int8 layers, with or without the
  // float weights beside them.
  const auto with_float = t2t::beam_search(*model, inputs, search);
  model->release_float_weights();
  const auto int8_ids = t2t::beam_search(*model, inputs, search);
  REQUIRE(int8_ids.size() == with_float.size());
  for (size_t s = 0; s < int8_ids.size(); ++s) CHECK(int8_ids[s][0].ids == with_float[s][0].ids);
  REQUIRE(int8_ids.size() == float_ids.size());
  int same = 0;
  for (size_t s = 0; s < int8_ids.size(); ++s) same += int8_ids[s][0].ids == float_ids[s][0].ids;
  CHECK(same >= 3);
}

TEST_CASE("the --quantize mode is checked before loading and applied after", "[int8]") {
  using Q = t2t::Quantization;
  CHECK(t2t::parse_quantization("none") == Q::kNone);
  CHECK(t2t::parse_quantization("int8") == Q::kInt8);
  CHECK(t2t::parse_quantization("bf16") == Q::kBf16);
  CHECK_THROWS_WITH(t2t::parse_quantization("int4"),
                    Catch::Contains("quantize=int4") && Catch::Contains("none, int8"));
  CHECK_NOTHROW(t2t::check_quantization(Q::kInt8, torch::kCPU));
  CHECK_THROWS_WITH(t2t::check_quantization(Q::kInt8, torch::Device("cuda:0")),
                    Catch::Contains("CPU only") && Catch::Contains("device=cpu"));
  // The library names the option; a front end spells it its own way.
  try {
    t2t::check_quantization(Q::kInt8, torch::Device("cuda:0"));
    FAIL("int8 on a GPU was not refused");
  } catch (const t2t::OptionError& e) {
    CHECK(e.option() == "quantize");
    const std::string flags = e.render([](const std::string& o) { return "--" + o; });
    CHECK_THAT(flags, Catch::StartsWith("--quantize=int8 runs on the CPU only") &&
                          Catch::Contains("--device=cpu"));
  }

  // A model without an int8 implementation is refused by name.
  struct Plain : t2t::T2TModel {
    torch::Tensor forward(const torch::Tensor&, const torch::Tensor&) override { return {}; }
    std::unique_ptr<t2t::DecoderState> start_decoding(const torch::Tensor&) override {
      return nullptr;
    }
    torch::Tensor decode_step(t2t::DecoderState&, const torch::Tensor&) override { return {}; }
  } plain;
  CHECK_THROWS_WITH(t2t::prepare_model(plain, Q::kInt8, false),
                    Catch::Contains("quantize=int8") && Catch::Contains("no int8"));
  CHECK_NOTHROW(t2t::prepare_model(plain, Q::kNone, false));
  // Nor can it be captured in CUDA graphs.
  CHECK_THROWS_WITH(t2t::prepare_model(plain, Q::kNone, true),
                    Catch::Contains("cannot decode at static shapes"));
}

TEST_CASE("int8 weights saved from one Transformer rebuild its int8 layers in another",
          "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  const t2t::HParams hp = small_hparams();
  const t2t::FeatureInfo features{50, 40, false};
  torch::manual_seed(3);
  auto trained = std::make_shared<t2t::Transformer>(hp, features);
  auto fresh = std::make_shared<t2t::Transformer>(hp, features);
  trained->eval();
  fresh->eval();
  const auto inputs = torch::randint(2, 50, {3, 6}, torch::kLong);
  const auto targets = torch::randint(2, 40, {3, 5}, torch::kLong);
  torch::NoGradGuard no_grad;

  const t2t::Int8WeightMap saved = trained->int8_weights();
  // The embedding and softmax matrices under their parameters' names, as
  // the dense layers' weights.
  CHECK(saved.count("input_emb") == 1);
  CHECK(saved.count("target_emb") == 1);
  CHECK(saved.count("softmax") == 1);
  CHECK(saved.count("softmax_int8") == 0);
  for (const auto& [name, w] : saved) {
    INFO(name);
    CHECK(w.values.scalar_type() == torch::kChar);
    CHECK(w.scales.scalar_type() == torch::kFloat);
    CHECK(w.scales.size(0) == w.values.size(0));
  }
  // The float parameters other than the int8 ones, as a loader sets them.
  for (const auto& p : trained->named_parameters())
    if (!saved.count(p.key())) fresh->named_parameters()[p.key()].copy_(p.value());

  // A map that does not fit changes nothing and names what is wrong.
  t2t::Int8WeightMap short_map = saved;
  short_map.erase(short_map.begin());
  short_map.emplace("no.such.weight", saved.begin()->second);
  CHECK_THROWS_WITH(fresh->load_int8_weights(std::move(short_map)),
                    Catch::Contains("missing " + saved.begin()->first) &&
                        Catch::Contains("unexpected no.such.weight"));
  CHECK_FALSE(fresh->quantized());

  fresh->load_int8_weights(saved);
  CHECK(fresh->quantized());
  trained->quantize_int8();
  // The same int8 layers: the same logits, bit for bit, and the float
  // weights they replace are released.
  CHECK(torch::equal(fresh->forward(inputs, targets), trained->forward(inputs, targets)));
  for (const auto& [name, w] : saved) {
    INFO(name);
    CHECK(fresh->named_parameters()[name].numel() == 0);
  }

  // What int8 checkpoints held before their embeddings were int8: the
  // softmax projection under "softmax_int8", the embeddings float (loaded
  // as float parameters). They load into the same int8 model.
  auto earlier = std::make_shared<t2t::Transformer>(hp, features);
  earlier->eval();
  t2t::Int8WeightMap earlier_map = saved;
  for (const char* name : {"input_emb", "target_emb", "softmax"}) earlier_map.erase(name);
  earlier_map.emplace("softmax_int8", saved.at("softmax"));
  for (const auto& p : trained->named_parameters())
    if (!earlier_map.count(p.key())) earlier->named_parameters()[p.key()].copy_(p.value());
  earlier->load_int8_weights(earlier_map);
  CHECK(torch::equal(earlier->forward(inputs, targets), trained->forward(inputs, targets)));
  CHECK(earlier->named_parameters()["input_emb"].numel() == 0);
}

TEST_CASE("an int8 checkpoint loads into a model built without initialization as quantizing does",
          "[int8]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  const t2t::HParams hp = small_hparams();
  const t2t::FeatureInfo features{50, 40, false};
  torch::manual_seed(4);
  auto trained = std::make_shared<t2t::Transformer>(hp, features);
  {
    // Biases as training leaves them: not the zeros a fresh model has.
    torch::NoGradGuard no_grad;
    for (auto& p : trained->named_parameters())
      if (p.key().find("bias") != std::string::npos) p.value().uniform_(-0.5, 0.5);
  }
  trained->eval();
  t2t::test::TempDir dir("int8_checkpoint");
  t2t::CheckpointMeta meta;
  meta.step = 7;
  const std::string path = t2t::save_int8_checkpoint(*trained, dir.path.string(), meta);

  std::shared_ptr<t2t::Transformer> loaded;
  {
    const t2t::SkipInitialization skip;
    loaded = std::make_shared<t2t::Transformer>(hp, features);
  }
  loaded->eval();
  t2t::CheckpointMeta read;
  t2t::load_int8_tensors(t2t::read_checkpoint_tensors(path, &read), *loaded, path);
  CHECK(read.weights == "int8");
  CHECK(read.step == 7);
  CHECK(loaded->quantized());

  trained->quantize_int8();
  const auto inputs = torch::randint(2, 50, {3, 6}, torch::kLong);
  const auto targets = torch::randint(2, 40, {3, 5}, torch::kLong);
  torch::NoGradGuard no_grad;
  CHECK(torch::equal(loaded->forward(inputs, targets), trained->forward(inputs, targets)));
}

// Each of t2t's int8 kernels against the product it stands for, in 64-bit
// integers: each row's codes (0 to the kernel's largest) from its range
// widened to hold 0, then (codes - zero) times the int8 rows.
void check_int8_kernel(t2t::Int8Kernel kernel) {
  torch::manual_seed(12);
  // Widths around the panels (64 and 16 columns), inputs not a multiple of
  // 4 or 16, row counts around the row groups (6 and 4) and past a chunk
  // of 128 rows.
  for (const auto& [in, out] : std::vector<std::pair<int64_t, int64_t>>{
           {64, 32}, {37, 5}, {130, 70}, {512, 96}}) {
    const auto weights = t2t::quantize_rows(torch::randn({out, in}) * 0.1, "test");
    const auto bias = torch::randn({out});
    const auto packed = t2t::Int8PanelWeight::pack(weights, bias, kernel);
    REQUIRE(packed);
    const double top = packed->max_code();
    for (const int64_t rows : {1, 5, 7, 9, 130}) {
      INFO(packed->kernel() << ": in " << in << ", out " << out << ", rows " << rows);
      auto x = torch::randn({rows, in}) * 3;
      x[0].fill_(0.0);  // a row of zeros: its own range is empty
      if (rows > 1) x[1].abs_();  // a row without negative values: zero at code 0
      const auto low = x.amin(1).clamp_max(0.0), high = x.amax(1).clamp_min(0.0);
      const auto scale = torch::where(high > low, (high - low) / top, torch::ones_like(low));
      const auto zero = (-low / scale).round().clamp(0, top);
      const auto codes = (x * (1.0 / scale).unsqueeze(1)).round().add(zero.unsqueeze(1)).clamp(0, top);
      const auto acc = (codes.to(torch::kLong) - zero.to(torch::kLong).unsqueeze(1))
                           .matmul(weights.values.to(torch::kLong).t());
      const auto want = acc.to(torch::kFloat) * (scale.unsqueeze(1) * weights.scales.unsqueeze(0)) +
                        bias;
      const auto got = packed->apply(x);
      REQUIRE(got.sizes() == torch::IntArrayRef({rows, out}));
      CHECK(torch::allclose(got, want, 1e-5, 1e-5));
      CHECK(got[0].equal(bias));
      // A row's result does not depend on the rows beside it.
      CHECK(torch::equal(packed->apply(x.narrow(0, rows - 1, 1).contiguous()),
                         got.narrow(0, rows - 1, 1)));
    }
  }
}

TEST_CASE("the VNNI int8 kernel computes the per-row quantized product exactly", "[int8]") {
  if (!t2t::int8_kernel_runs(t2t::Int8Kernel::vnni)) T2T_SKIP("this CPU has no AVX-512 VNNI");
  check_int8_kernel(t2t::Int8Kernel::vnni);
}

TEST_CASE("the AVX2 int8 kernel computes the per-row 7-bit quantized product exactly", "[int8]") {
  if (!t2t::int8_kernel_runs(t2t::Int8Kernel::avx2)) T2T_SKIP("this CPU has no AVX2 with FMA");
  check_int8_kernel(t2t::Int8Kernel::avx2);
  // The codes reach 127 and the weights -127 and 127: two products of the
  // largest magnitude summed in 16 bits do not saturate.
  const auto weight = torch::tensor({{1.0f, 1.0f, -1.0f, -1.0f}, {-1.0f, -1.0f, 1.0f, 1.0f}});
  const auto packed =
      t2t::Int8PanelWeight::pack(t2t::quantize_rows(weight, "test"), {}, t2t::Int8Kernel::avx2);
  REQUIRE(packed);
  const auto x = torch::tensor({{1.0f, 1.0f, -1.0f, -1.0f}});
  const auto got = packed->apply(x);
  // Codes 0-127 with the row's zero at 64 (its range [-1, 1]): 1 is code
  // 127 and -1 code 0, so each output is 4 to within a code's step.
  CHECK(got[0][0].item<float>() == Approx(4.0f).margin(4.0 / 64));
  CHECK(got[0][1].item<float>() == Approx(-4.0f).margin(4.0 / 64));
}

TEST_CASE("a quantized Transformer with relative positions decodes close to the float one",
          "[int8][relative]") {
  if (const std::string why = t2t::int8_unsupported_reason(); !why.empty()) T2T_SKIP(why);
  t2t::HParams hp = t2t::hparams_registry().get("transformer_relative_tiny")();
  hp.set("max_relative_position", int64_t{3});
  auto model = wide_model(hp);
  const auto [inputs, targets] = random_pairs();
  torch::NoGradGuard no_grad;
  const auto float_logits = model->forward(inputs, targets);
  model->quantize_int8();
  const auto int8_logits = model->forward(inputs, targets);
  CHECK(relative_error(int8_logits, float_logits) < 0.05);
  // The relative tables stay float32; the caches too (no slot tables).
  const auto state = model->start_decoding(inputs);
  for (int64_t t = 0; t < 7; ++t) {
    const auto last = t == 0 ? torch::zeros({5}, torch::kLong) : targets.select(1, t - 1);
    INFO("position " << t);
    CHECK(relative_error(model->decode_step(*state, last), int8_logits.select(1, t)) < 0.035);
  }
  CHECK(state->layers[0].self_keys.scalar_type() == torch::kFloat);
  t2t::SearchOptions search;
  search.beam_size = 4;
  search.extra_length = 6;
  const auto results = t2t::beam_search(*model, inputs, search);
  CHECK(results.size() == 5);
}
