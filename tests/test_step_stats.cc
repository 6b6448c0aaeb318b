// A training step decides on the device whether to apply its update, and
// StepStats sums the steps' outcomes there for the host to read now and
// then (t2t/train/step_stats.h): checked here on CPU tensors, where the
// same code runs as on a GPU.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/fused_adam.h"
#include "t2t/train/step_stats.h"
#include "t2t/train/train_step.h"
#include "tests/random_batch.h"

namespace {

constexpr int64_t kVocab = 30;

t2t::HParams tiny_hparams() {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", int64_t{16});
  hp.set("filter_size", int64_t{32});
  hp.set("num_hidden_layers", int64_t{1});
  hp.set("num_heads", int64_t{2});
  for (const char* key : {"layer_prepostprocess_dropout", "attention_dropout", "relu_dropout"})
    hp.set(key, 0.0);
  return hp;
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

bool all_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

t2t::StepOutcome outcome(double loss, double tokens, double norm, bool nonfinite) {
  auto s = [](double v) { return torch::full({}, v, torch::kFloat64); };
  return {s(loss), s(tokens), s(tokens / 2), s(norm), s(0), s(nonfinite ? 1 : 0)};
}

}  // namespace

TEST_CASE("StepStats sums applied steps and counts non-finite runs across snapshots", "[train]") {
  t2t::StepStats stats(torch::kCPU);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  stats.add(outcome(10, 4, 1.5, false));
  stats.add(outcome(nan, 6, nan, true));
  stats.add(outcome(nan, 6, nan, true));
  stats.snapshot({torch::full({}, 1.0, torch::kFloat64), torch::full({}, 0.0, torch::kFloat64)});
  CHECK(stats.pending());
  CHECK_THROWS(stats.snapshot());  // one at a time
  t2t::StepReport r = stats.take();
  CHECK_FALSE(stats.pending());
  CHECK(r.steps == 3);
  CHECK(r.applied == 1);
  CHECK(r.nonfinite == 2);
  CHECK(r.overflow == 0);
  CHECK(r.nonfinite_run == 2);
  CHECK(r.max_nonfinite_run == 2);
  CHECK(r.loss_sum == 10);  // the NaN losses are kept out
  CHECK(r.tokens == 4);
  CHECK(r.input_tokens == 2);
  CHECK(r.grad_norm == 1.5);
  CHECK(r.extra == std::vector<double>{1.0, 0.0});

  // The run goes on into the next report, then a finite step ends it.
  stats.add(outcome(nan, 6, nan, true));
  stats.add(outcome(7, 3, 0.5, false));
  stats.snapshot();
  r = stats.take();
  CHECK(r.steps == 2);
  CHECK(r.max_nonfinite_run == 3);
  CHECK(r.nonfinite_run == 0);
  CHECK(r.loss_sum == 7);
  CHECK(r.grad_norm == 0.5);
  CHECK(r.extra.empty());
  CHECK_THROWS(stats.take());
}

TEST_CASE("FusedAdam::step_unless skips the update on the device's word", "[train]") {
  torch::manual_seed(3);
  std::vector<torch::Tensor> params{torch::randn({4, 3}).requires_grad_(),
                                    torch::randn({5}).requires_grad_()};
  t2t::FusedAdam adam(params, torch::optim::AdamOptions(0.1).betas({0.9, 0.98}).eps(1e-9));
  for (auto& p : params) p.mutable_grad() = torch::randn_like(p);
  adam.step_unless(torch::zeros({}));  // found_inf = 0: an ordinary step
  const auto after_one = copies(params);
  const auto moments = [&] {
    std::vector<torch::Tensor> m;
    for (auto& p : params) {
      auto& s = static_cast<torch::optim::AdamParamState&>(*adam.state().at(p.unsafeGetTensorImpl()));
      m.push_back(s.exp_avg().clone());
      m.push_back(s.exp_avg_sq().clone());
    }
    return m;
  };
  const auto moments_one = moments();
  for (auto& p : params) p.mutable_grad() = torch::randn_like(p);
  adam.step_unless(torch::ones({}));  // found_inf = 1: nothing moves
  CHECK(all_equal(copies(params), after_one));
  CHECK(all_equal(moments(), moments_one));
  adam.step_unless(torch::zeros({}));
  CHECK_FALSE(all_equal(copies(params), after_one));
}

TEST_CASE("a non-finite step is skipped without reading the device, and training goes on",
          "[train]") {
  const t2t::HParams hp = tiny_hparams();
  torch::manual_seed(5);
  auto model = t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{kVocab, kVocab, true});
  auto optimizer = t2t::make_optimizer(*model, hp);
  t2t::TrainStep step(*model, *optimizer, hp, torch::kCPU, "none");
  const t2t::Batch batch = t2t::test::random_batch(11, kVocab, 3, 6, 7);

  REQUIRE(step.run({batch}, 1e-3).applied);
  // A NaN in one weight makes the loss NaN: the update must leave every
  // weight (the poisoned one aside) and the Adam moments as they were.
  torch::Tensor poisoned = model->parameters().back();
  const torch::Tensor good = poisoned.detach().clone();
  {
    torch::NoGradGuard no_grad;
    poisoned.view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
  }
  const auto before = copies(model->parameters());
  step.queue({batch}, 1e-3);
  step.queue({batch}, 1e-3);
  {
    auto after = copies(model->parameters());
    after.pop_back();
    auto expected = before;
    expected.pop_back();
    CHECK(all_equal(after, expected));
  }
  {
    torch::NoGradGuard no_grad;
    poisoned.copy_(good);
  }
  const t2t::StepResult ok = step.run({batch}, 1e-3);
  CHECK(ok.applied);
  CHECK(std::isfinite(ok.loss_sum));
  step.stats().snapshot();
  const t2t::StepReport r = step.stats().take();
  CHECK(r.steps == 4);
  CHECK(r.applied == 2);
  CHECK(r.nonfinite == 2);
  CHECK(r.max_nonfinite_run == 2);
  CHECK(r.nonfinite_run == 0);
  CHECK(r.tokens == 2 * static_cast<double>(batch.target_tokens));
}
