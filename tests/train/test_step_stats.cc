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
#include "tests/support/random_batch.h"

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

TEST_CASE("FusedAdam's graph form, its learning rate corrected on the host and read on the "
          "device, is the same update as its step, skips included",
          "[train]") {
  torch::manual_seed(4);
  const auto options = torch::optim::AdamOptions(0.1).betas({0.9, 0.997}).eps(1e-2);
  std::vector<torch::Tensor> a{torch::randn({4, 3}).requires_grad_(), torch::randn({5}).requires_grad_()};
  std::vector<torch::Tensor> b = copies(a);
  for (auto& p : b) p.requires_grad_();
  t2t::FusedAdam plain(a, options), graph_form(b, options);
  const auto lr_t = torch::zeros({});
  for (int step = 0; step < 5; ++step) {
    const bool skip = step == 2;
    for (size_t i = 0; i < a.size(); ++i) {
      // A large epsilon, where it sits (before or after the correction) shows.
      const auto g = torch::randn_like(a[i]) * 1e-2;
      a[i].mutable_grad() = g.clone();
      b[i].mutable_grad() = g.clone();
    }
    const auto found_inf = torch::full({}, skip ? 1.0f : 0.0f);
    plain.step_unless(found_inf);
    lr_t.fill_(graph_form.corrected_lr(0.1));
    graph_form.queue_corrected_update(lr_t, found_inf);
    graph_form.count_step();
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("step " << step << ", tensor " << i);
      CHECK(torch::allclose(a[i], b[i], 1e-5, 1e-7));
    }
  }
  // The step counts checkpoints keep advance alike, skipped steps included.
  for (size_t i = 0; i < a.size(); ++i) {
    const auto& sa = static_cast<torch::optim::AdamParamState&>(*plain.state().at(a[i].unsafeGetTensorImpl()));
    const auto& sb =
        static_cast<torch::optim::AdamParamState&>(*graph_form.state().at(b[i].unsafeGetTensorImpl()));
    CHECK(sa.step() == 5);
    CHECK(sb.step() == 5);
    CHECK(torch::allclose(sa.exp_avg_sq(), sb.exp_avg_sq(), 1e-5, 1e-12));
  }
  // lr_t is TensorFlow's: lr * sqrt(1 - beta2^t) / (1 - beta1^t), t the next step.
  CHECK(graph_form.corrected_lr(0.1) ==
        Approx(0.1 * std::sqrt(1 - std::pow(0.997, 6)) / (1 - std::pow(0.9, 6))));
}

TEST_CASE("a step at static shapes, its batch padded to its length bucket and every position "
          "scored, trains as the usual step",
          "[train]") {
  const t2t::HParams hp = tiny_hparams();
  const auto make = [&] {
    torch::manual_seed(9);
    return t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{kVocab, kVocab, true});
  };
  auto usual_model = make();
  auto static_model = make();
  auto usual_opt = t2t::make_optimizer(*usual_model, hp);
  auto static_opt = t2t::make_optimizer(*static_model, hp);
  t2t::TrainStep usual(*usual_model, *usual_opt, hp, torch::kCPU, "none");
  t2t::TrainStep fixed(*static_model, *static_opt, hp, torch::kCPU, "none");
  // Buckets of 8, 9, 10, ... tokens: batches 5 and 6 long share one shape.
  fixed.use_static_shapes(t2t::batching_scheme(64, 64), /*graphs=*/false);
  CHECK_THROWS_WITH(fixed.use_static_shapes(t2t::batching_scheme(64, 64), /*graphs=*/true),
                    Catch::Contains("CUDA graphs need a CUDA device"));
  const std::vector<t2t::Batch> batches{t2t::test::random_batch(1, kVocab, 3, 5, 4),
                                        t2t::test::random_batch(2, kVocab, 3, 4, 6),
                                        t2t::test::random_batch(3, kVocab, 3, 12, 11),
                                        t2t::test::random_batch(4, kVocab, 3, 6, 5)};
  for (size_t i = 0; i < batches.size(); ++i) {
    const t2t::StepResult u = usual.run({batches[i]}, 1e-2);
    const t2t::StepResult s = fixed.run({batches[i]}, 1e-2);
    INFO("step " << i);
    CHECK(s.applied);
    CHECK(s.tokens == u.tokens);
    CHECK(s.input_tokens == u.input_tokens);
    CHECK(s.loss_sum == Approx(u.loss_sum).epsilon(1e-5));
    CHECK(s.grad_norm == Approx(u.grad_norm).epsilon(1e-4));
    const auto pu = usual_model->parameters(), ps = static_model->parameters();
    for (size_t k = 0; k < pu.size(); ++k) CHECK(torch::allclose(pu[k], ps[k], 1e-4, 1e-6));
  }
  // Widths 5 and 6 (bucket [0, 8)) share a shape; 12 has its own.
  CHECK(fixed.static_shapes() == 2);
  CHECK(fixed.captured_graphs() == 0);
  fixed.stats().snapshot();
  CHECK(fixed.stats().take().steps == 4);
}
