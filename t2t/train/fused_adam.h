// Adam as TensorFlow (and so T2T) defines it: torch::optim::Adam's L2
// weight decay and bias-corrected moments, with epsilon added to sqrt(v)
// before the bias correction rather than after (TF's "epsilon hat"); the
// update is done by ATen's fused multi-tensor kernel: one
// pass over each parameter instead of the ~7 elementwise operations the
// C++ frontend's Adam runs per tensor, which costs as much as a tiny
// model's backward. The state is Adam's own, so checkpoints written with
// either class load into the other.
#pragma once

#include <torch/optim/adam.h>

#include <optional>
#include <vector>

namespace t2t {

class FusedAdam : public torch::optim::Adam {
 public:
  FusedAdam(std::vector<torch::Tensor> params, torch::optim::AdamOptions options)
      : torch::optim::Adam(std::move(params), options) {}

  // No closure; amsgrad falls back to Adam's own step.
  torch::Tensor step(LossClosure closure = nullptr) override;

  // The step, skipped on the device where `found_inf` (a float32 scalar on
  // the parameters' device) is 1: parameters and moments stay as they
  // are, and nothing is read back to decide. The step count advances
  // either way (as T2T's global step does), so the host knows it.
  void step_unless(const at::Tensor& found_inf);

 private:
  void fused_step(const std::optional<at::Tensor>& found_inf);
};

}  // namespace t2t
