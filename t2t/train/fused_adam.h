// Adam as TensorFlow (and so T2T) defines it: torch::optim::Adam's L2
// weight decay and bias-corrected moments, with epsilon added to sqrt(v)
// before the bias correction (TF's "epsilon hat"), updated by ATen's fused
// multi-tensor kernel. The state is Adam's own, so checkpoints of either
// class load into the other.
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

  // The step, skipped on the device where `found_inf` (float32 scalar on
  // the parameters' device) is 1, with nothing read back. The step count
  // advances either way, as T2T's global step does.
  void step_unless(const at::Tensor& found_inf);

  // The same update in a form a CUDA graph can capture (no host value
  // changing between steps), TensorFlow's own form: the bias corrections
  // folded into lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
  // (corrected_lr), which the host writes into `lr_t` (float32 scalar on
  // the parameters' device) before each run. Skipped where `found_inf` is
  // 1. Call count_step() after each update queued or replayed. Every
  // parameter with a gradient must have the same step count.
  double corrected_lr(double lr) const;
  void queue_corrected_update(const at::Tensor& lr_t, const at::Tensor& found_inf);
  void count_step();

 private:
  void fused_step(const std::optional<at::Tensor>& found_inf);
  torch::optim::AdamParamState& state_of(const torch::Tensor& param);
  // The largest step count of any parameter.
  int64_t steps_done() const;

  // A step count so large that beta^t is 0: "no bias correction left".
  at::Tensor uncorrected_;
};

}  // namespace t2t
