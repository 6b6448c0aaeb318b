// Guided-alignment training (Marian's): the cost against a plain statement
// of it, a step that lowers it, and what the step and the trainer refuse.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/loss.h"
#include "t2t/train/step_stats.h"
#include "t2t/train/train_step.h"
#include "tests/support/random_batch.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

constexpr int64_t kVocab = 30;
constexpr int kSteps = 60;

t2t::HParams tiny_hparams(double weight) {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", int64_t{16});
  hp.set("filter_size", int64_t{32});
  hp.set("num_hidden_layers", int64_t{2});
  hp.set("num_heads", int64_t{2});
  for (const char* key : {"layer_prepostprocess_dropout", "attention_dropout", "relu_dropout"})
    hp.set(key, 0.0);
  hp.set("guided_alignment_weight", weight);
  return hp;
}

// Target position t of every row linked to input position t (a diagonal),
// where both are tokens, as the reader's links are.
torch::Tensor diagonal_links(const t2t::Batch& b) {
  std::vector<int64_t> flat;
  const int64_t len = std::min(b.inputs.size(1), b.targets.size(1));
  for (int64_t r = 0; r < b.size(); ++r)
    for (int64_t t = 0; t < len; ++t)
      if (b.inputs[r][t].item<int64_t>() != 0 && b.targets[r][t].item<int64_t>() != 0)
        flat.insert(flat.end(), {r, t, t});
  return torch::tensor(flat, torch::kLong).view({-1, 3});
}

}  // namespace

TEST_CASE("guided_alignment_cost is minus the mean log attention of each aligned position",
          "[guided_alignment]") {
  torch::manual_seed(3);
  const auto attention = torch::softmax(torch::randn({2, 3, 4}), -1).requires_grad_();
  // Row 0 target 1 has two links, row 1 target 2 one; the rest none.
  const auto links = torch::tensor({0, 1, 0, 0, 1, 3, 1, 2, 2}, torch::kLong).view({-1, 3});
  const auto cost = t2t::guided_alignment_cost(attention, links);
  const auto a = attention.detach();
  auto l = [&](int64_t r, int64_t t, int64_t s) {
    return std::log(a[r][t][s].item<double>() + 1e-6);
  };
  const double expected = -(0.5 * l(0, 1, 0) + 0.5 * l(0, 1, 3) + l(1, 2, 2));
  CHECK(cost.loss_sum.item<double>() == Approx(expected).epsilon(1e-5));
  CHECK(cost.weight_sum.item<double>() == 2);
  // Only the linked cells get a gradient.
  cost.loss_sum.backward();
  const auto g = attention.grad();
  CHECK(g.ne(0).sum().item<int64_t>() == 3);
  CHECK(g[0][1][0].item<double>() == Approx(-0.5 / (a[0][1][0].item<double>() + 1e-6)));
  // No links: 0, and bad shapes are refused.
  const auto none = t2t::guided_alignment_cost(attention, torch::zeros({0, 3}, torch::kLong));
  CHECK(none.loss_sum.item<double>() == 0);
  CHECK_THROWS_AS(t2t::guided_alignment_cost(attention, torch::zeros({2, 2}, torch::kLong)),
                  t2t::Error);
  CHECK_THROWS_AS(t2t::guided_alignment_cost(torch::zeros({2, 3}), links), t2t::Error);
}

TEST_CASE("training with guided alignment pulls the chosen head onto the links",
          "[guided_alignment]") {
  t2t::Batch batch = t2t::test::random_batch(11, kVocab, 4, 6, 6);
  batch.alignment = diagonal_links(batch);
  const t2t::AttentionProbe probe{-1, 0};  // the hparams' defaults: last layer, head 0
  // The same model and steps with and without the cost.
  auto train = [&](double weight, t2t::StepReport* report) {
    const t2t::HParams hp = tiny_hparams(weight);
    torch::manual_seed(5);
    auto model =
        t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{kVocab, kVocab, true});
    REQUIRE(model->reports_attention());
    auto optimizer = t2t::make_optimizer(*model, hp);
    t2t::TrainStep step(*model, *optimizer, hp, torch::kCPU, "none");
    double loss_first = 0, loss_last = 0;
    for (int i = 0; i < kSteps; ++i) {
      const auto r = step.run({batch}, 3e-3);
      REQUIRE(r.applied);
      (i == 0 ? loss_first : loss_last) = r.loss_sum / r.tokens;
    }
    CHECK(loss_last < loss_first);  // the translation loss is reported and still falls
    step.stats().snapshot();
    *report = step.stats().take();
    torch::NoGradGuard no_grad;
    model->eval();
    const auto attention =
        model->forward_labelled_with_attention(batch.inputs, batch.targets, probe).second;
    return t2t::guided_alignment_cost(attention, batch.alignment).loss_sum.item<double>();
  };
  t2t::StepReport guided_report, plain_report;
  const double guided = train(1.0, &guided_report);
  const double plain = train(0.0, &plain_report);
  INFO("guided " << guided << ", plain " << plain);
  CHECK(guided < 0.05 * plain);
  // The steps' reports carry the cost and the aligned positions.
  CHECK(guided_report.aligned_positions == kSteps * batch.alignment.size(0));
  CHECK(guided_report.alignment_cost > 0);
  CHECK(plain_report.aligned_positions == 0);
}

TEST_CASE("guided alignment refuses batches without links and static shapes",
          "[guided_alignment]") {
  const t2t::HParams hp = tiny_hparams(0.5);
  auto model = t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{kVocab, kVocab, true});
  auto optimizer = t2t::make_optimizer(*model, hp);
  t2t::TrainStep step(*model, *optimizer, hp, torch::kCPU, "none");
  const t2t::Batch batch = t2t::test::random_batch(11, kVocab, 2, 5, 5);
  CHECK_THROWS_WITH(step.run({batch}, 1e-3), Catch::Contains("train_alignments"));
  CHECK_THROWS_AS(step.use_static_shapes(t2t::batching_scheme(256, 64), false), t2t::OptionError);

  t2t::HParams negative = tiny_hparams(-1);
  CHECK_THROWS_AS(t2t::TrainStep(*model, *optimizer, negative, torch::kCPU, "none"),
                  t2t::OptionError);
  // Off, the same batch trains as before.
  const t2t::HParams off = tiny_hparams(0);
  t2t::TrainStep plain(*model, *optimizer, off, torch::kCPU, "none");
  CHECK(plain.run({batch}, 1e-3).applied);
}

TEST_CASE("t2t-trainer trains with guided alignment from t2t-datagen's shards",
          "[guided_alignment][trainer][e2e]") {
  TempDir dir("guided_trainer");
  const std::string sample = t2t::test::source_dir() + "/data/sample/";
  // Each pair's first words aligned.
  const std::vector<std::string> align(t2t::test::read_lines(sample + "train.en").size(), "0-0");
  t2t::test::write_lines(dir / "train.align", align);
  const std::string data = dir / "data";
  auto gen = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data +
                         " --train_alignments=" + (dir / "train.align"));
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  auto trainer = [&](const std::string& data_dir, const std::string& out) {
    return run_command(
        "./t2t-trainer --problem=translate_enzh_sample --model=transformer "
        "--hparams_set=transformer_tiny --hparams='batch_size=1024,guided_alignment_weight=0.3' "
        "--data_dir=" + data_dir + " --output_dir=" + out +
        " --train_steps=20 --log_step_count_steps=10 --eval_steps=2 --device=cpu");
  };
  auto r = trainer(data, dir / "run");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("alignment cost"));

  // Shards without alignments: the trainer says how to get them.
  const std::string plain = dir / "plain";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + plain)
              .exit_code == 0);
  auto refused = trainer(plain, dir / "run2");
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.output, Catch::Contains("guided_alignment_weight") &&
                                 Catch::Contains("train_alignments"));
}
