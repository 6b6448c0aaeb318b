// LibTorch's Adam and t2t::FusedAdam side by side for the optimizer tests:
// copies of the same parameters on one device, stepped with the same random
// gradients. Include after <torch/torch.h>.
#pragma once

#include <vector>

#include "t2t/train/fused_adam.h"

namespace t2t::test {

struct AdamPair {
  AdamPair(std::vector<torch::Tensor> initial, torch::Device device)
      : init(std::move(initial)),
        device(device),
        plain_params(copies()),
        fused_params(copies()),
        plain(plain_params, options),
        fused(fused_params, options) {}

  // Fresh copies of the initial parameters on the device, needing gradients.
  std::vector<torch::Tensor> copies() const {
    std::vector<torch::Tensor> out;
    for (const auto& t : init) out.push_back(t.clone().to(device).requires_grad_(true));
    return out;
  }

  // One step of each; the parameter at `without_grad` (if >= 0) gets no
  // gradient this time.
  void step(int64_t without_grad = -1) {
    for (size_t i = 0; i < init.size(); ++i) {
      const torch::Tensor g = torch::randn_like(init[i]).to(device);
      const bool none = static_cast<int64_t>(i) == without_grad;
      plain_params[i].mutable_grad() = none ? torch::Tensor() : g.clone();
      fused_params[i].mutable_grad() = none ? torch::Tensor() : g.clone();
    }
    plain.step();
    fused.step();
  }

  std::vector<torch::Tensor> init;
  torch::Device device;
  torch::optim::AdamOptions options =
      torch::optim::AdamOptions(1e-2).betas({0.9, 0.997}).eps(1e-9).weight_decay(0.01);
  std::vector<torch::Tensor> plain_params, fused_params;
  torch::optim::Adam plain;
  t2t::FusedAdam fused;
};

}  // namespace t2t::test
