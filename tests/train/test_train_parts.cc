#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/train/learning_rate.h"
#include "t2t/train/loss.h"
#include "t2t/train/smoothed_xent_cpu.h"
#include "tests/support/adam_pair.h"

using Catch::Contains;

namespace {

// The smoothed loss written out the long way: the full soft-target
// distribution against log-softmax, per position, minus its entropy.
double reference_loss(const std::vector<std::vector<double>>& logits,
                      const std::vector<int64_t>& labels, double ls, double* weight) {
  const size_t vocab = logits[0].size();
  const double conf = 1.0 - ls, low = ls / static_cast<double>(vocab - 1);
  double total = 0.0;
  *weight = 0.0;
  for (size_t t = 0; t < labels.size(); ++t) {
    if (labels[t] == 0) continue;
    double z = 0.0;
    for (double x : logits[t]) z += std::exp(x);
    double xent = 0.0, entropy = 0.0;
    for (size_t v = 0; v < vocab; ++v) {
      const double q = static_cast<int64_t>(v) == labels[t] ? conf : low;
      xent -= q * (logits[t][v] - std::log(z));
      if (q > 0) entropy -= q * std::log(q);
    }
    total += xent - entropy;
    *weight += 1.0;
  }
  return total;
}

// The same loss by its definition, differentiable: soft targets against
// log_softmax, minus their entropy, summed over the non-pad positions.
torch::Tensor definition_loss(const torch::Tensor& logits, const torch::Tensor& labels,
                              double ls) {
  const int64_t V = logits.size(-1);
  const double conf = 1.0 - ls, low = ls / static_cast<double>(V - 1);
  torch::Tensor soft = torch::full(logits.sizes(), low, torch::kDouble);
  soft.scatter_(-1, labels.unsqueeze(-1), conf);
  const double normalizing = -((conf > 0 ? conf * std::log(conf) : 0.0) +
                               static_cast<double>(V - 1) * low * std::log(low + 1e-20));
  const auto xent = -(soft * torch::log_softmax(logits, -1)).sum(-1) - normalizing;
  return (xent * labels.ne(0)).sum();
}

torch::Tensor as_logits(const std::vector<std::vector<double>>& rows) {
  std::vector<float> flat;
  for (const auto& r : rows)
    for (double x : r) flat.push_back(static_cast<float>(x));
  return torch::tensor(flat).reshape({1, static_cast<int64_t>(rows.size()),
                                      static_cast<int64_t>(rows[0].size())});
}

double scalar(const at::Tensor& t) { return t.item<double>(); }

t2t::HParams named(const std::string& n) { return t2t::hparams_registry().get(n)(); }

}  // namespace

TEST_CASE("label-smoothed cross entropy matches a hand computation", "[loss]") {
  // Vocabulary of 4, three positions, the last one padding.
  const std::vector<std::vector<double>> rows = {
      {1.0, 2.0, 0.5, -1.0}, {0.0, -0.5, 0.3, 2.5}, {9.0, -9.0, 4.0, 1.0}};
  const std::vector<int64_t> labels = {1, 3, 0};
  const torch::Tensor logits = as_logits(rows);
  const torch::Tensor ids = torch::tensor(labels).reshape({1, 3});

  for (double ls : {0.0, 0.1, 0.3}) {
    INFO("label_smoothing " << ls);
    double weight = 0;
    const double want = reference_loss(rows, labels, ls, &weight);
    t2t::LossSum got = t2t::smoothed_cross_entropy(logits, ids, ls);
    CHECK(scalar(got.weight_sum) == 2.0);
    CHECK(scalar(got.loss_sum) == Approx(want).epsilon(1e-5));
  }
  // Without smoothing it is plain cross entropy: -log softmax(gold).
  const double p1 = std::exp(2.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(0.5) + std::exp(-1.0));
  const double p3 = std::exp(2.5) / (1.0 + std::exp(-0.5) + std::exp(0.3) + std::exp(2.5));
  CHECK(scalar(t2t::smoothed_cross_entropy(logits, ids, 0.0).loss_sum) ==
        Approx(-std::log(p1) - std::log(p3)).epsilon(1e-5));
}

TEST_CASE("a perfect prediction costs nothing, padding costs nothing", "[loss]") {
  const int64_t V = 6;
  const std::vector<int64_t> labels = {2, 5, 1, 0, 0};
  for (double ls : {0.0, 0.1}) {
    INFO("label_smoothing " << ls);
    // Logits whose softmax is the smoothed target distribution itself.
    const double conf = 1.0 - ls, low = ls / (V - 1);
    torch::Tensor logits = torch::empty({1, 5, V});
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t v = 0; v < V; ++v)
        logits[0][t][v] = v == labels[static_cast<size_t>(t)]
                              ? (ls == 0.0 ? 30.0 : std::log(conf))
                              : (ls == 0.0 ? -30.0 : std::log(low));
    t2t::LossSum l = t2t::smoothed_cross_entropy(logits, torch::tensor(labels).reshape({1, 5}), ls);
    CHECK(std::abs(scalar(l.loss_sum)) < 1e-4);
    CHECK(scalar(l.weight_sum) == 3.0);
  }
  // Anything at pad positions leaves the loss and its gradient alone.
  torch::Tensor a = torch::randn({2, 4, 7});
  torch::Tensor ids = torch::tensor(std::vector<int64_t>{3, 1, 0, 0, 6, 2, 5, 0}).reshape({2, 4});
  torch::Tensor b = a.clone();
  b.index_put_({0, 2}, torch::randn({7}) * 10);
  b.index_put_({1, 3}, torch::randn({7}) * 10);
  const double la = scalar(t2t::smoothed_cross_entropy(a, ids, 0.1).loss_sum);
  CHECK(scalar(t2t::smoothed_cross_entropy(b, ids, 0.1).loss_sum) == Approx(la).epsilon(1e-6));
  torch::Tensor x = b.clone().requires_grad_(true);
  t2t::smoothed_cross_entropy(x, ids, 0.1).loss_sum.backward();
  CHECK(x.grad().index({0, 2}).abs().sum().item<double>() == 0.0);
  CHECK(x.grad().index({0, 0}).abs().sum().item<double>() > 0.0);
}

TEST_CASE("the smoothed loss equals the explicit soft-target form on random data", "[loss]") {
  torch::manual_seed(3);
  const int64_t B = 3, T = 5, V = 50;
  torch::Tensor logits = torch::randn({B, T, V}, torch::kDouble) * 3;
  torch::Tensor labels = torch::randint(0, V, {B, T}, torch::kLong);
  // float64 logits: 0.1 goes through PyTorch's fused loss, 0.99 (beyond (V-1)/V) through the
  // written-out form: both must equal the definition, values and gradients.
  for (double ls : {0.0, 0.1, 0.99}) {
    INFO("label_smoothing " << ls);
    torch::Tensor x1 = logits.clone().requires_grad_(true);
    torch::Tensor want = definition_loss(x1, labels, ls);
    want.backward();
    torch::Tensor x2 = logits.clone().requires_grad_(true);
    t2t::LossSum got = t2t::smoothed_cross_entropy(x2, labels, ls);
    got.loss_sum.backward();
    CHECK(scalar(got.loss_sum) == Approx(scalar(want)).epsilon(1e-10));
    CHECK(scalar(got.weight_sum) == scalar(labels.ne(0).sum()));
    CHECK(torch::allclose(x1.grad(), x2.grad(), 1e-9, 1e-12));
  }
  const double ls = 0.1;
  // Half-precision logits are computed in float32.
  t2t::LossSum half = t2t::smoothed_cross_entropy(logits.to(torch::kBFloat16), labels, ls);
  CHECK(half.loss_sum.scalar_type() == torch::kFloat);

  CHECK_THROWS_AS(t2t::smoothed_cross_entropy(logits, labels.view({-1}), ls), t2t::Error);
  CHECK_THROWS_AS(t2t::smoothed_cross_entropy(logits, labels, 1.5), t2t::Error);
  CHECK_THROWS_AS(t2t::smoothed_cross_entropy(torch::zeros({1, 2, 1}),
                                              torch::ones({1, 2}, torch::kLong), 0.1),
                  t2t::Error);
}

TEST_CASE("the float32 CPU loss kernel equals the definition, values and gradients", "[loss]") {
  torch::manual_seed(4);
  const int saved_threads = at::get_num_threads();
  // A vocabulary that is not a multiple of the kernel's 16 lanes, logits
  // large enough that an unshifted exp would overflow, and padding rows.
  for (const int64_t V : {50, 8195}) {
    for (double ls : {0.0, 0.1, 0.99}) {
      INFO("vocab " << V << ", label_smoothing " << ls);
      const int64_t B = 3, T = 7;
      const torch::Tensor logits = torch::randn({B, T, V}, torch::kDouble) * 30;
      torch::Tensor labels = torch::randint(1, V, {B, T}, torch::kLong);
      labels.index_put_({0, torch::indexing::Slice(4)}, 0);
      torch::Tensor x1 = logits.clone().requires_grad_(true);
      torch::Tensor want = definition_loss(x1, labels, ls);
      want.backward();
      torch::Tensor grads[2];
      double sums[2];
      for (int threads : {1, 2}) {
        at::set_num_threads(threads);
        torch::Tensor x2 = logits.to(torch::kFloat).requires_grad_(true);
        t2t::LossSum got = t2t::smoothed_cross_entropy(x2, labels, ls);
        CHECK(got.loss_sum.scalar_type() == torch::kFloat);
        got.loss_sum.backward();
        grads[threads - 1] = x2.grad();
        sums[threads - 1] = scalar(got.loss_sum);
      }
      at::set_num_threads(saved_threads);
      CHECK(sums[0] == Approx(scalar(want)).epsilon(1e-5));
      CHECK((grads[0].to(torch::kDouble) - x1.grad()).abs().max().item<double>() < 1e-5);
      CHECK(grads[0].index({0, 5}).abs().sum().item<double>() == 0.0);
      // The same sums and gradients on any number of threads.
      CHECK(sums[0] == sums[1]);
      CHECK(torch::equal(grads[0], grads[1]));
    }
  }
  CHECK_THROWS(
      t2t::smoothed_xent_sum_cpu(torch::zeros({2, 5}), torch::tensor({1, 5}, torch::kLong), 1.0, 0.0));
  CHECK_THROWS(t2t::smoothed_xent_sum_cpu(torch::zeros({2, 5}, torch::kDouble),
                                          torch::tensor({1, 2}, torch::kLong), 1.0, 0.0));
}

TEST_CASE("accuracy counts only non-pad positions", "[loss]") {
  // Arg-max ids: row 0 -> 2, 1, 3; row 1 -> 0, 2, 2.
  torch::Tensor logits = torch::tensor(std::vector<float>{
                                           0, 1, 5, 2,  0, 9, 1, 2,  0, 1, 2, 7,  //
                                           8, 1, 5, 2,  0, 2, 4, 3,  6, 1, 9, 0})
                             .reshape({2, 3, 4});
  torch::Tensor labels =
      torch::tensor(std::vector<int64_t>{2, 1, 1, 3, 2, 0}).reshape({2, 3});
  t2t::AccuracyCounts acc = t2t::padded_accuracy(logits, labels);
  CHECK(acc.total.item<int64_t>() == 5);
  CHECK(acc.correct.item<int64_t>() == 3);  // (0,0), (0,1), (1,1)
  // The two misses: (0,2) ranks ids 3, 2, 1, 0 and has label 1; (1,0) ranks
  // ids 0, 2, 3, 1 and has label 3. Both are third.
  CHECK(t2t::padded_accuracy_topk(logits, labels, 2).correct.item<int64_t>() == 3);
  CHECK(t2t::padded_accuracy_topk(logits, labels, 3).correct.item<int64_t>() == 5);
  // k beyond the vocabulary is capped: everything is in the top "5" of 4.
  t2t::AccuracyCounts top5 = t2t::padded_accuracy_topk(logits, labels);
  CHECK(top5.correct.item<int64_t>() == 5);
  CHECK(top5.total.item<int64_t>() == 5);
  t2t::AccuracyCounts seq = t2t::padded_sequence_accuracy(logits, labels);
  CHECK(seq.correct.item<int64_t>() == 0);
  CHECK(seq.total.item<int64_t>() == 2);
  labels.index_put_({0, 2}, 3);
  labels.index_put_({1, 0}, 0);
  CHECK(t2t::padded_sequence_accuracy(logits, labels).correct.item<int64_t>() == 2);
}

TEST_CASE("transformer_base: 2 * min(1, s/8000) * max(s, 8000)^-0.5 * 512^-0.5", "[lr]") {
  t2t::HParams hp = named("transformer_base");
  CHECK(t2t::learning_rate(hp, 0) == 0.0);
  CHECK(t2t::learning_rate(hp, 8000) == Approx(9.882e-4).epsilon(1e-3));
  CHECK(t2t::learning_rate(hp, 8000) == Approx(2.0 / std::sqrt(8000.0 * 512.0)));
  CHECK(t2t::learning_rate(hp, 4000) == Approx(0.5 * 2.0 / std::sqrt(8000.0 * 512.0)));
  CHECK(t2t::learning_rate(hp, 32000) == Approx(2.0 / std::sqrt(32000.0 * 512.0)));
  // The peak is at the end of warmup.
  CHECK(t2t::learning_rate(hp, 7999) < t2t::learning_rate(hp, 8000));
  CHECK(t2t::learning_rate(hp, 8001) < t2t::learning_rate(hp, 8000));
  // transformer_big: d = 1024, same shape, ~7.0e-4 at the peak.
  CHECK(t2t::learning_rate(named("transformer_big"), 8000) == Approx(6.988e-4).epsilon(1e-3));
  // Gradient accumulation over 8 micro-batches: the schedule runs in updates.
  t2t::HParams multi = named("transformer_base_multistep8");
  CHECK(t2t::learning_rate(multi, 64000) == Approx(t2t::learning_rate(hp, 8000)));
  CHECK(t2t::learning_rate(multi, 8000) == Approx(t2t::learning_rate(hp, 1000)));
}

TEST_CASE("transformer_base_v1: legacy noam with the Adam correction", "[lr]") {
  t2t::HParams hp = named("transformer_base_v1");
  // lr 0.1 * 0.002 * 5000 * 512^-0.5 * min((s+1) 4000^-1.5, (s+1)^-0.5):
  // the paper's d^-0.5 * min(n^-0.5, n warmup^-1.5) with n = s + 1.
  auto paper = [](double n) {
    return std::pow(512.0, -0.5) * std::min(std::pow(n, -0.5), n * std::pow(4000.0, -1.5));
  };
  CHECK(t2t::learning_rate(hp, 3999) == Approx(7.0e-4).epsilon(2e-3));
  CHECK(t2t::learning_rate(hp, 3999) == Approx(paper(4000)));
  CHECK(t2t::learning_rate(hp, 0) == Approx(paper(1)));
  CHECK(t2t::learning_rate(hp, 0) > 0.0);
  CHECK(t2t::learning_rate(hp, 99999) == Approx(paper(100000)));
  // Not an Adam-family optimizer: no correction.
  hp.set("optimizer", "sgd");
  CHECK(t2t::learning_rate(hp, 3999) == Approx(paper(4000) * 500.0));
}

TEST_CASE("transformer_base_single_gpu: 0.1 * min(1, s/16000) * max(s, 16000)^-0.5", "[lr]") {
  t2t::HParams hp = named("transformer_base_single_gpu");
  CHECK(t2t::learning_rate(hp, 16000) == Approx(7.906e-4).epsilon(1e-3));
  CHECK(t2t::learning_rate(hp, 8000) == Approx(0.5 * 0.1 / std::sqrt(16000.0)));
  CHECK(t2t::learning_rate(hp, 64000) == Approx(0.1 / std::sqrt(64000.0)));
}

TEST_CASE("other factors and legacy decay schemes", "[lr]") {
  t2t::HParams hp = named("transformer_base");
  hp.set("learning_rate_warmup_steps", 100);
  hp.set("learning_rate_schedule", " constant * rsqrt_normalized_decay ");
  hp.set("learning_rate_constant", 0.5);
  CHECK(t2t::learning_rate(hp, 50) == Approx(0.5));
  CHECK(t2t::learning_rate(hp, 400) == Approx(0.25));
  hp.set("learning_rate_schedule", "exp_decay");
  hp.set("learning_rate_decay_rate", 0.5);
  hp.set("learning_rate_decay_steps", 1000);
  CHECK(t2t::learning_rate(hp, 0) == Approx(1.0));
  CHECK(t2t::learning_rate(hp, 1100) == Approx(0.5));
  CHECK(t2t::learning_rate(hp, 1600) == Approx(std::pow(0.5, 1.5)));
  hp.set("learning_rate_decay_staircase", true);
  CHECK(t2t::learning_rate(hp, 1600) == Approx(0.5));
  hp.set("learning_rate_schedule", "rsqrt_hidden_size*linear_warmup");
  CHECK(t2t::learning_rate(hp, 25) == Approx(0.25 / std::sqrt(512.0)));

  // basic_params1's default: legacy, no decay, exponential warmup from 1%.
  t2t::HParams legacy = named("transformer_base_v1");
  legacy.set("learning_rate_decay_scheme", "none");
  legacy.set("learning_rate_warmup_steps", 100);
  const double base = 0.1 * 0.002;
  CHECK(t2t::learning_rate(legacy, 0) == Approx(0.01 * base));
  CHECK(t2t::learning_rate(legacy, 50) == Approx(0.1 * base));
  CHECK(t2t::learning_rate(legacy, 100) == Approx(base));
  CHECK(t2t::learning_rate(legacy, 100000) == Approx(base));
  legacy.set("learning_rate_decay_scheme", "sqrt");
  CHECK(t2t::learning_rate(legacy, 10100) == Approx(base * 5.0));  // 500 / sqrt(10000)
  legacy.set("learning_rate_decay_scheme", "piecewise");
  CHECK_THROWS_AS(t2t::learning_rate(legacy, 200), t2t::Error);
  legacy.set("learning_rate_decay_scheme", "bogus");
  CHECK_THROWS_WITH(t2t::learning_rate(legacy, 200), Contains("bogus") && Contains("noam"));
  CHECK_THROWS_WITH(t2t::check_learning_rate_schedule(legacy), Contains("bogus"));
}

TEST_CASE("an unknown factor names itself and the known ones", "[lr]") {
  t2t::HParams hp = named("transformer_base");
  hp.set("learning_rate_schedule", "constant*linear_warmpu");
  CHECK_THROWS_WITH(t2t::learning_rate(hp, 10),
                    Contains("linear_warmpu") && Contains("linear_warmup") &&
                        Contains("rsqrt_decay") && Contains("legacy"));
  CHECK_THROWS_WITH(t2t::check_learning_rate_schedule(hp), Contains("linear_warmpu"));
  hp.set("learning_rate_schedule", "constant*linear_decay");
  CHECK_THROWS_WITH(t2t::learning_rate(hp, 10), Contains("train_steps"));
  hp.add("train_steps", 1000);
  hp.set("learning_rate_decay_steps", 500);
  CHECK(t2t::learning_rate(hp, 750) == Approx(2.0 * 0.5));
  CHECK_NOTHROW(t2t::check_learning_rate_schedule(named("transformer_base")));
  CHECK_NOTHROW(t2t::check_learning_rate_schedule(named("transformer_base_v1")));
}

TEST_CASE("the fused Adam step is TensorFlow's Adam and shares LibTorch's state", "[optimizer]") {
  torch::manual_seed(11);
  t2t::test::AdamPair pair({torch::randn({7, 5}), torch::randn({5}), torch::randn({3, 2, 4})},
                           torch::kCPU);
  const auto& a = pair.plain_params;
  const auto& b = pair.fused_params;
  for (int step = 0; step < 5; ++step) {
    // Now and then a parameter without a gradient: both leave it alone.
    pair.step(step == 2 ? 1 : -1);
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("step " << step << ", tensor " << i);
      // With epsilon far below sqrt(v), where it sits makes no difference.
      CHECK(torch::allclose(a[i], b[i], 1e-6, 1e-7));
    }
  }
  // Where it does: TensorFlow adds epsilon to sqrt(v) before the bias
  // correction, lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
  {
    const double lr = 0.1, b1 = 0.9, b2 = 0.997, eps = 1e-2;
    auto p = torch::randn({50}).requires_grad_(true);
    t2t::FusedAdam adam({p}, torch::optim::AdamOptions(lr).betas({b1, b2}).eps(eps));
    auto ref = p.detach().clone();
    auto m = torch::zeros_like(ref), v = torch::zeros_like(ref);
    for (int t = 1; t <= 4; ++t) {
      const auto g = torch::randn({50}) * 1e-2;
      p.mutable_grad() = g.clone();
      adam.step();
      m = b1 * m + (1 - b1) * g;
      v = b2 * v + (1 - b2) * g * g;
      ref -= lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t)) * m / (v.sqrt() + eps);
      INFO("step " << t);
      CHECK(torch::allclose(p.detach(), ref, 1e-5, 1e-7));
    }
  }
  CHECK_FALSE(torch::allclose(a[0], pair.init[0]));
  // Its state is Adam's: saved from one, it loads into the other.
  torch::serialize::OutputArchive out;
  pair.fused.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  std::istringstream read(bytes.str());
  in.load_from(read);
  auto c = pair.copies();
  torch::optim::Adam restored(c, pair.options);
  restored.load(in);
  const auto& s = static_cast<torch::optim::AdamParamState&>(
      *restored.state().at(c[0].unsafeGetTensorImpl()));
  CHECK(s.step() == 5);
  CHECK(s.exp_avg().abs().sum().item<double>() > 0);
}
