// t2t against real Tensor2Tensor 1.15.7, number for number. The fixture
// (tests/fixtures/t2t_run, made by tests/t2t_reference/make_fixtures.sh) is
// a checkpoint written by T2T's own trainer and what T2T computed from it
// (tests/t2t_reference/t2t_expected.py): for the same weights and the same
// batch, with dropout off, t2t's logits, loss, gradients and one training
// step must equal T2T's; so must the learning rate schedules, the
// initializers' statistics and dropout's keep rate and scale.

// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "models/transformer.h"
#include "t2t/core/hparams.h"
#include "t2t/data/batch_reader.h"
#include "t2t/data/batching.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/kernels/dropout.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/tensorflow_import.h"
#include "t2t/train/learning_rate.h"
#include "t2t/train/loss.h"
#include "t2t/train/tf_adam_state.h"
#include "t2t/train/train_step.h"
#include "tests/support/test_util.h"

namespace {

const std::string kFixture = t2t::test::source_dir() + "/tests/fixtures/t2t_run";
// The run's --hparams (tests/t2t_reference/make_fixtures.sh), dropout off.
const std::string kOverrides =
    "hidden_size=16,filter_size=32,num_heads=2,batch_size=256,max_length=48,"
    "learning_rate_warmup_steps=10,layer_prepostprocess_dropout=0.0,attention_dropout=0.0,"
    "relu_dropout=0.0";
constexpr int64_t kInputVocab = 256;
constexpr int64_t kTargetVocab = 370;

// A fixture of make_fixtures.sh: its directory, model, hparams set and the
// overrides it added to kOverrides.
struct Run {
  std::string dir, model, set, extra;
};
const std::vector<Run> kRuns = {
    {kFixture, "transformer", "transformer_tiny", ""},
    // T2T's relative position attention, distances clipped at 6.
    {t2t::test::source_dir() + "/tests/fixtures/t2t_run_relative", "transformer",
     "transformer_relative_tiny", ",max_relative_position=6"},
    // T2T's Evolved Transformer (its schedule reads the run's train_steps).
    {t2t::test::source_dir() + "/tests/fixtures/t2t_run_evolved", "evolved_transformer",
     "evolved_transformer_tiny", ""}};

std::shared_ptr<t2t::T2TModel> make_model(const Run& run, const t2t::HParams& hp) {
  return t2t::model_registry().get(run.model)(hp,
                                              t2t::FeatureInfo{kInputVocab, kTargetVocab, false});
}

t2t::HParams run_hparams(const Run& run = kRuns[0]) {
  t2t::HParams hp = t2t::hparams_registry().get(run.set)();
  hp.parse(kOverrides + run.extra);
  if (!hp.has("train_steps")) hp.add("train_steps", int64_t{20});  // as T2T's trainer
  return hp;
}

torch::Tensor read(const t2t::TFCheckpointReader& r, const std::string& name) {
  const auto& entry = r.entry(name);
  if (entry.dtype == static_cast<int>(t2t::TFDType::kInt64) ||
      entry.dtype == static_cast<int>(t2t::TFDType::kInt32)) {
    auto v = r.read_ints(name);
    return torch::from_blob(v.data(), entry.shape, torch::kLong).clone();
  }
  auto v = r.read_floats(name);
  return torch::from_blob(v.data(), entry.shape, torch::kFloat).clone();
}

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

struct Fixture {
  explicit Fixture(const Run& r = kRuns[0])
      : run(t2t::find_tf_checkpoint(r.dir + "/train")),
        expected(r.dir + "/expected/expected"),
        hp(run_hparams(r)),
        space(expected.read_scalar_int("target_space_id")) {
    torch::manual_seed(1);
    model = make_model(r, hp);
    t2t::tensorflow_import(*model).load_tensorflow(run, space);
    model->train();  // every dropout is 0: training mode, as T2T's step ran
  }
  t2t::TFCheckpointReader run;
  t2t::TFCheckpointReader expected;
  t2t::HParams hp;
  int64_t space;
  std::shared_ptr<t2t::T2TModel> model;

  torch::Tensor inputs() const { return read(expected, "batch/inputs"); }
  torch::Tensor targets() const { return read(expected, "batch/targets"); }
  t2t::TFSources sources() const {
    return t2t::tensorflow_import(*model).tensorflow_sources(
        [&](const std::string& n) { return run.has(n); }, space);
  }
};

}  // namespace

TEST_CASE("T2T's checkpoint fills every parameter, softmax untied for en-zh", "[t2t_equivalence]") {
  Fixture f;
  auto params = f.model->named_parameters();
  // T2T unsets shared_embedding_and_softmax_weights for vocabularies of
  // different sizes: three matrices, as its checkpoint holds.
  REQUIRE(f.hp.get_bool("shared_embedding_and_softmax_weights"));
  CHECK(params.contains("input_emb"));
  CHECK(params.contains("target_emb"));
  CHECK(params["softmax"].size(0) == kTargetVocab);
  // A parameter assembled from 16 shards equals the shards.
  auto shard0 = read(f.run, "transformer/symbol_modality_370_16/softmax/weights_0");
  CHECK(shard0.size(0) == 24);  // 370 = 16 * 23 + 2: the first two shards have a row more
  CHECK(torch::equal(params["softmax"].narrow(0, 0, 24), shard0));
  auto q = read(f.run, "transformer/body/encoder/layer_0/self_attention/multihead_attention/q/kernel");
  CHECK(torch::equal(params["encoder.0.self_attention.qkv.weight"].narrow(0, 0, 16), q.t()));
}

TEST_CASE("T2T's relative position tables fill t2t's", "[t2t_equivalence]") {
  Fixture f(kRuns[1]);
  const std::string scope =
      "transformer/body/decoder/layer_1/self_attention/multihead_attention/"
      "dot_product_attention_relative/relative_positions_";
  auto params = f.model->named_parameters();
  const auto keys = read(f.run, scope + "keys/embeddings");
  CHECK(keys.sizes() == torch::IntArrayRef({13, 8}));  // 2 * 6 + 1 distances, 16 / 2 channels
  CHECK(torch::equal(params["decoder.1.self_attention.relative_keys"], keys));
  CHECK(torch::equal(params["decoder.1.self_attention.relative_values"],
                     read(f.run, scope + "values/embeddings")));
}

TEST_CASE("logits and loss equal T2T's for the same weights and batch", "[t2t_equivalence]") {
  const Run& r = GENERATE(from_range(kRuns));
  INFO(r.set);
  Fixture f(r);
  const auto expected_logits = read(f.expected, "logits");
  torch::NoGradGuard no_grad;
  const auto logits = f.model->forward(f.inputs(), f.targets());
  REQUIRE(logits.sizes() == expected_logits.sizes());
  INFO("largest logit difference " << max_abs(logits - expected_logits));
  CHECK(max_abs(logits - expected_logits) < 1e-4 * std::max(1.0, max_abs(expected_logits)));

  const auto l = t2t::smoothed_cross_entropy(logits, f.targets(), f.hp.get_float("label_smoothing"));
  const double loss = (l.loss_sum / l.weight_sum).item<double>();
  const double t2t_loss = read(f.expected, "loss").item<double>();
  CHECK(loss == Approx(t2t_loss).epsilon(1e-5));
}

TEST_CASE("gradients equal T2T's", "[t2t_equivalence]") {
  const Run& r = GENERATE(from_range(kRuns));
  INFO(r.set);
  Fixture f(r);
  const auto logits = f.model->forward(f.inputs(), f.targets());
  const auto l = t2t::smoothed_cross_entropy(logits, f.targets(), f.hp.get_float("label_smoothing"));
  (l.loss_sum / l.weight_sum).backward();
  auto params = f.model->named_parameters();
  for (const auto& [name, source] : f.sources()) {
    const auto expected = t2t::assemble_tf_tensor(source, f.expected, "grad/");
    const auto& grad = params[name].grad();
    INFO(name << ": largest gradient difference " << max_abs(grad - expected) << " of "
              << max_abs(expected));
    CHECK(max_abs(grad - expected) <= 1e-5 + 1e-4 * max_abs(expected));
  }
}

TEST_CASE("one training step from T2T's Adam state equals T2T's", "[t2t_equivalence]") {
  const Run& r = GENERATE(from_range(kRuns));
  INFO(r.set);
  Fixture f(r);
  const int64_t step = f.expected.read_scalar_int("step_before");
  REQUIRE(step == f.run.read_scalar_int("global_step"));
  // The schedule at `step` is T2T's; the update from `step` applies the
  // rate of step + 1 (T2T increments global_step first), as the trainer does.
  CHECK(t2t::learning_rate(f.hp, step) ==
        Approx(read(f.expected, "learning_rate").item<double>()).epsilon(1e-6));
  const double lr = t2t::learning_rate(f.hp, step + 1);

  auto optimizer = t2t::make_optimizer(*f.model, f.hp);
  t2t::load_adam_state_from_tf(*optimizer, *f.model, f.run, f.hp, f.space);
  t2t::TrainStep train_step(*f.model, *optimizer, f.hp, torch::kCPU, "none");
  t2t::Batch batch;
  batch.inputs = f.inputs();
  batch.targets = f.targets();
  batch.input_tokens = batch.inputs.ne(0).sum().item<int64_t>();
  batch.target_tokens = batch.targets.ne(0).sum().item<int64_t>();
  const auto result = train_step.run({batch}, lr);
  REQUIRE(result.applied);
  CHECK(result.loss_sum / result.tokens ==
        Approx(read(f.expected, "loss").item<double>()).epsilon(1e-5));

  auto params = f.model->named_parameters();
  auto& state = optimizer->state();
  for (const auto& [name, source] : f.sources()) {
    const auto& p = params[name];
    const auto expected = t2t::assemble_tf_tensor(source, f.expected, "after/");
    // The change each side made, compared: the weights themselves are
    // much larger than one step.
    const auto before = t2t::assemble_tf_tensor(source, f.run);
    const auto change = p.detach() - before, t2t_change = expected - before;
    INFO(name << ": largest difference in the update " << max_abs(change - t2t_change) << " of "
              << max_abs(t2t_change));
    CHECK(max_abs(change - t2t_change) <= 1e-7 + 1e-4 * max_abs(t2t_change));
    auto& adam = static_cast<torch::optim::AdamParamState&>(*state.at(p.unsafeGetTensorImpl()));
    const auto m = t2t::assemble_tf_tensor(source, f.expected, "after/training/LazyAdam/", "/m");
    const auto v = t2t::assemble_tf_tensor(source, f.expected, "after/training/LazyAdam/", "/v");
    CHECK(max_abs(adam.exp_avg() - m) <= 1e-8 + 1e-4 * max_abs(m));
    CHECK(max_abs(adam.exp_avg_sq() - v) <= 1e-12 + 1e-4 * max_abs(v));
    CHECK(adam.step() == f.expected.read_scalar_int("after/training/LazyAdam/iter"));
  }
}

TEST_CASE("learning rate schedules equal T2T's over 10,000 steps", "[t2t_equivalence]") {
  struct Case {
    std::string fixture, name, set, overrides;
    int64_t train_steps;  // as T2T's trainer adds it; 0: none
  };
  const std::string evolved = kRuns[2].dir;
  for (const Case& c :
       {Case{kFixture, "transformer_tiny_recipe", "transformer_tiny",
             "batch_size=2048,max_length=64,learning_rate_warmup_steps=400", 0},
        Case{kFixture, "transformer_base", "transformer_base", "", 0},
        Case{kFixture, "transformer_base_v1", "transformer_base_v1", "", 0},
        // Cosine decays to train_steps (single_cycle_cos_decay).
        Case{evolved, "evolved_transformer_tiny", "evolved_transformer_tiny", "", 20000},
        Case{evolved, "evolved_transformer_base", "evolved_transformer_base", "", 20000}}) {
    t2t::TFCheckpointReader expected(c.fixture + "/expected/expected");
    const auto steps = expected.read_ints("lr_schedule/steps");
    t2t::HParams hp = t2t::hparams_registry().get(c.set)();
    if (!c.overrides.empty()) hp.parse(c.overrides);
    if (c.train_steps > 0) hp.add("train_steps", c.train_steps);
    const auto rates = expected.read_floats("lr_schedule/" + c.name);
    REQUIRE(rates.size() == steps.size());
    double worst = 0;
    int64_t worst_step = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const double ours = t2t::learning_rate(hp, steps[i]);
      const double diff = std::abs(ours - rates[i]) / std::max(1e-12, std::abs(double(rates[i])));
      if (diff > worst) worst = diff, worst_step = steps[i];
    }
    INFO(c.name << ": largest relative difference " << worst << " at step " << worst_step);
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("initial values have T2T's mean and variance", "[t2t_equivalence]") {
  const Run& r = GENERATE(from_range(kRuns));
  INFO(r.set);
  t2t::TFCheckpointReader expected(r.dir + "/expected/expected");
  // The set's own sizes on the fixture's vocabularies, as T2T drew them.
  t2t::HParams hp = t2t::hparams_registry().get(r.set)();
  if (!hp.has("train_steps")) hp.add("train_steps", int64_t{20});
  torch::manual_seed(7);
  const auto model = make_model(r, hp);
  const int64_t hidden = hp.get_int("hidden_size");
  // The variables of a tiny model are named by its sizes: look them up there.
  const auto has = [&](const std::string& n) {
    return expected.has("init/tiny/mean/" + n);
  };
  auto params = model->named_parameters();
  for (const auto& [name, source] : t2t::tensorflow_import(*model).tensorflow_sources(has, 0)) {
    const torch::Tensor value = params[name].detach().to(torch::kDouble);
    // Variables of one parameter are drawn alike (shards; q, k and v): the
    // average of their statistics stands for T2T's over all of them.
    double mean = 0, variance = 0;
    for (const std::string& var : source.names()) {
      mean += read(expected, "init/tiny/mean/" + var).item<double>();
      variance += read(expected, "init/tiny/var/" + var).item<double>();
    }
    mean /= static_cast<double>(source.names().size());
    variance /= static_cast<double>(source.names().size());
    const double n = static_cast<double>(source.row >= 0 ? hidden : value.numel());
    const double our_mean = value.mean().item<double>();
    const double our_var = value.var(/*unbiased=*/false).item<double>();
    INFO(name << ": mean " << our_mean << " vs T2T's " << mean << ", variance " << our_var
              << " vs " << variance << " over " << n << " values");
    // Five standard errors of the difference of two random samples (the
    // variance's for a uniform or normal draw is below sqrt(2 / n) of it).
    CHECK(std::abs(our_mean - mean) <= 5.0 * std::sqrt(2.0 * variance / n) + 1e-12);
    CHECK(std::abs(our_var - variance) <= 5.0 * variance * std::sqrt(2.0 * 2.0 / n) + 1e-12);
  }
}

TEST_CASE("dropout keeps and scales as T2T's", "[t2t_equivalence]") {
  t2t::TFCheckpointReader expected(kFixture + "/expected/expected");
  const double t2t_fraction = read(expected, "keep/fraction").item<double>();
  const double t2t_scale = read(expected, "keep/scale").item<double>();
  torch::manual_seed(3);
  const auto y = t2t::dropout(torch::ones({64, 64, 64}), 0.3, true);
  const auto kept = y.masked_select(y.ne(0));
  const double fraction = static_cast<double>(kept.numel()) / y.numel();
  const double n = static_cast<double>(y.numel());
  // Both are binomial draws of 262,144 with p = 0.7.
  CHECK(std::abs(fraction - t2t_fraction) <= 5.0 * std::sqrt(2.0 * 0.7 * 0.3 / n));
  CHECK(t2t_fraction == Approx(0.7).margin(5.0 * std::sqrt(0.7 * 0.3 / n)));
  CHECK(kept.mean().item<double>() == Approx(t2t_scale).epsilon(1e-6));
}

TEST_CASE("evaluation batches equal T2T's on the same shard", "[t2t_equivalence]") {
  t2t::TFCheckpointReader expected(kFixture + "/expected/expected");
  t2t::HParams hp = run_hparams();
  const auto scheme = t2t::batching_scheme(hp);
  const auto boundaries = expected.read_ints("batches/boundaries");
  const auto sizes = expected.read_ints("batches/batch_sizes");
  CHECK(scheme.boundaries == boundaries);
  CHECK(scheme.batch_sizes == sizes);

  t2t::BatchReader reader({kFixture + "/data/translate_enzh_fixture-dev-00000-of-00001"}, scheme,
                          t2t::reader_options(hp, /*training=*/false, false, 1));
  std::vector<std::vector<int64_t>> ours;
  while (auto batch = reader.next())
    ours.push_back({batch->size(), batch->inputs.size(1), batch->targets.size(1)});
  const auto t2t_flat = expected.read_ints("batches/eval_shapes");
  std::vector<std::vector<int64_t>> theirs;
  for (size_t i = 0; i + 2 < t2t_flat.size(); i += 3)
    theirs.push_back({t2t_flat[i], t2t_flat[i + 1], t2t_flat[i + 2]});
  // Full buckets leave as they fill, in the same order on both sides; the
  // partial ones flushed at the end come in an order of TensorFlow's own.
  size_t full = 0;
  while (full < theirs.size() && full < ours.size() && theirs[full] == ours[full]) ++full;
  INFO("batches equal in order: " << full << " of " << theirs.size());
  std::sort(ours.begin(), ours.end());
  std::sort(theirs.begin(), theirs.end());
  CHECK(ours == theirs);
}
