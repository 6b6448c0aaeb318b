#include "t2t/train/fused_adam.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <algorithm>
#include <utility>

namespace t2t {

torch::Tensor FusedAdam::step(LossClosure closure) {
  for (const auto& group : param_groups())
    if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad())
      return torch::optim::Adam::step(closure);
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    // The kernel takes tensors of one device and dtype at a time.
    std::vector<std::pair<std::pair<c10::Device, c10::ScalarType>, std::vector<size_t>>> by_kind;
    auto& params = group.params();
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].grad().defined()) continue;
      const std::pair<c10::Device, c10::ScalarType> kind{params[i].device(),
                                                         params[i].scalar_type()};
      auto it = std::find_if(by_kind.begin(), by_kind.end(),
                             [&](const auto& k) { return k.first == kind; });
      if (it == by_kind.end()) it = by_kind.insert(by_kind.end(), {kind, {}});
      it->second.push_back(i);
    }
    for (const auto& [kind, indices] : by_kind) {
      std::vector<torch::Tensor> p, g, m, v, steps;
      for (size_t i : indices) {
        torch::Tensor& param = params[i];
        auto& slot = state_[param.unsafeGetTensorImpl()];
        if (!slot) {
          auto fresh = std::make_unique<torch::optim::AdamParamState>();
          fresh->exp_avg(torch::zeros_like(param, torch::MemoryFormat::Preserve));
          fresh->exp_avg_sq(torch::zeros_like(param, torch::MemoryFormat::Preserve));
          slot = std::move(fresh);
        }
        auto& state = static_cast<torch::optim::AdamParamState&>(*slot);
        state.step(state.step() + 1);
        p.push_back(param);
        g.push_back(param.grad());
        m.push_back(state.exp_avg());
        v.push_back(state.exp_avg_sq());
        // The kernel reads the step count as a float tensor on the device.
        steps.push_back(torch::full({}, static_cast<double>(state.step()),
                                    torch::TensorOptions().dtype(torch::kFloat).device(kind.first)));
      }
      at::_fused_adam_(p, g, m, v, /*max_exp_avg_sqs=*/{}, steps, options.lr(),
                       std::get<0>(options.betas()), std::get<1>(options.betas()),
                       options.weight_decay(), options.eps(), /*amsgrad=*/false,
                       /*maximize=*/false);
    }
  }
  return loss;
}

}  // namespace t2t
