#include "t2t/train/fused_adam.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "t2t/core/error.h"

namespace t2t {

torch::Tensor FusedAdam::step(LossClosure closure) {
  for (const auto& group : param_groups())
    if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad())
      return torch::optim::Adam::step(closure);
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  fused_step(std::nullopt);
  return loss;
}

void FusedAdam::step_unless(const at::Tensor& found_inf) {
  for (const auto& group : param_groups())
    if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad())
      throw Error("FusedAdam::step_unless: amsgrad is not supported");
  fused_step(found_inf);
}

torch::optim::AdamParamState& FusedAdam::state_of(const torch::Tensor& param) {
  auto& slot = state_[param.unsafeGetTensorImpl()];
  if (!slot) {
    auto fresh = std::make_unique<torch::optim::AdamParamState>();
    fresh->exp_avg(torch::zeros_like(param, torch::MemoryFormat::Preserve));
    fresh->exp_avg_sq(torch::zeros_like(param, torch::MemoryFormat::Preserve));
    slot = std::move(fresh);
  }
  return static_cast<torch::optim::AdamParamState&>(*slot);
}

void FusedAdam::fused_step(const std::optional<at::Tensor>& found_inf) {
  torch::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    // The kernel takes tensors of one device and dtype at a time, and one
    // epsilon, which depends on the step count (below).
    using Kind = std::tuple<c10::Device, c10::ScalarType, int64_t>;
    std::vector<std::pair<Kind, std::vector<size_t>>> by_kind;
    auto& params = group.params();
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].grad().defined()) continue;
      auto& state = state_of(params[i]);
      state.step(state.step() + 1);
      const Kind kind{params[i].device(), params[i].scalar_type(), state.step()};
      auto it = std::find_if(by_kind.begin(), by_kind.end(),
                             [&](const auto& k) { return k.first == kind; });
      if (it == by_kind.end()) it = by_kind.insert(by_kind.end(), {kind, {}});
      it->second.push_back(i);
    }
    const double beta2 = std::get<1>(options.betas());
    for (const auto& [kind, indices] : by_kind) {
      const auto& [device, dtype, step] = kind;
      std::vector<torch::Tensor> p, g, m, v, steps;
      // The kernel reads the step count as a float tensor on the device, one
      // a parameter; they all share one (it only reads them).
      const torch::Tensor step_count = torch::full(
          {}, static_cast<double>(step), torch::TensorOptions().dtype(torch::kFloat).device(device));
      for (size_t i : indices) {
        torch::Tensor& param = params[i];
        auto& state = static_cast<torch::optim::AdamParamState&>(*state_[param.unsafeGetTensorImpl()]);
        p.push_back(param);
        g.push_back(param.grad());
        m.push_back(state.exp_avg());
        v.push_back(state.exp_avg_sq());
        steps.push_back(step_count);
      }
      // TensorFlow's Adam adds epsilon to sqrt(v) before the bias
      // correction, PyTorch's after it: the same update for
      // eps / sqrt(1 - beta2^step) here. It shows where v is tiny (an
      // embedding row's rarely used entries), so T2T's is kept.
      const double eps = options.eps() / std::sqrt(1.0 - std::pow(beta2, static_cast<double>(step)));
      std::optional<at::Tensor> skip;
      if (found_inf) skip = found_inf->to(device, at::kFloat);
      at::_fused_adam_(p, g, m, v, /*max_exp_avg_sqs=*/{}, steps, options.lr(),
                       std::get<0>(options.betas()), beta2, options.weight_decay(), eps,
                       /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/std::nullopt, skip);
    }
  }
}

int64_t FusedAdam::steps_done() const {
  int64_t done = 0;
  for (const auto& group : param_groups())
    for (const auto& p : group.params()) {
      auto it = state_.find(p.unsafeGetTensorImpl());
      if (it != state_.end())
        done = std::max(done, static_cast<torch::optim::AdamParamState&>(*it->second).step());
    }
  return done;
}

double FusedAdam::corrected_lr(double lr) const {
  const auto& options = static_cast<const torch::optim::AdamOptions&>(defaults());
  const double t = static_cast<double>(steps_done() + 1);
  return lr * std::sqrt(1.0 - std::pow(std::get<1>(options.betas()), t)) /
         (1.0 - std::pow(std::get<0>(options.betas()), t));
}

void FusedAdam::queue_corrected_update(const at::Tensor& lr_t, const at::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  // Every parameter is on lr_t's device (checked below): one count serves.
  if (!uncorrected_.defined() || uncorrected_.device() != lr_t.device())
    uncorrected_ =
        torch::full({}, 1e30, torch::TensorOptions().dtype(torch::kFloat).device(lr_t.device()));
  const at::Tensor& uncorrected = uncorrected_;
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    if (options.amsgrad()) throw Error("FusedAdam::queue_corrected_update: amsgrad is not supported");
    std::vector<torch::Tensor> p, g, m, v, steps;
    for (auto& param : group.params()) {
      if (!param.grad().defined()) continue;
      auto& state = state_of(param);
      if (param.device() != lr_t.device())
        throw Error("FusedAdam::queue_corrected_update: the learning rate is on " +
                    lr_t.device().str() + ", a parameter on " + param.device().str());
      p.push_back(param);
      g.push_back(param.grad());
      m.push_back(state.exp_avg());
      v.push_back(state.exp_avg_sq());
      steps.push_back(uncorrected);
    }
    if (p.empty()) continue;
    at::_fused_adam_(p, g, m, v, /*max_exp_avg_sqs=*/{}, steps, lr_t,
                     std::get<0>(options.betas()), std::get<1>(options.betas()),
                     options.weight_decay(), options.eps(), /*amsgrad=*/false, /*maximize=*/false,
                     /*grad_scale=*/std::nullopt, found_inf.to(lr_t.device(), at::kFloat));
  }
}

void FusedAdam::count_step() {
  for (auto& group : param_groups())
    for (auto& param : group.params()) {
      if (!param.grad().defined()) continue;
      auto& state = state_of(param);
      state.step(state.step() + 1);
    }
}

}  // namespace t2t
