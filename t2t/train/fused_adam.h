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

  // The same update in a form a CUDA graph can capture: nothing in it
  // depends on a host value that changes from step to step. TensorFlow's
  // own form: the bias corrections are folded into the learning rate,
  // lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t) for the step t about to
  // be taken (T2T's global step, which TensorFlow's beta powers follow),
  // and epsilon is added to sqrt(v) uncorrected. The host computes lr_t
  // (corrected_lr) and writes it into `lr_t`, a float32 scalar on the
  // parameters' device, before each run; the kernel is told there is no
  // correction left to make. Skipped where `found_inf` (float32 scalar,
  // same device) is 1. Call count_step() after each update queued or
  // replayed: the host's step counts, which checkpoints keep. Every
  // parameter with a gradient must have the same step count.
  double corrected_lr(double lr) const;
  void queue_corrected_update(const at::Tensor& lr_t, const at::Tensor& found_inf);
  void count_step();

 private:
  void fused_step(const std::optional<at::Tensor>& found_inf);
  // A parameter's state, made (zero moments, step 0) on first use.
  torch::optim::AdamParamState& state_of(const torch::Tensor& param);
  // The steps done (the largest count of any parameter).
  int64_t steps_done() const;

  // On the parameters' device: the step count the kernel reads for "no
  // bias correction left", so large that beta^t is 0.
  at::Tensor uncorrected_;
};

}  // namespace t2t
