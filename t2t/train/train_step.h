// One optimizer update: forward and backward over this worker's
// micro-batches, gradients summed across workers, clipping, a non-finite
// check and the Adam step. The loss is averaged over every target token of
// every micro-batch on every worker, so N workers with batch B train as one
// with batch N·B, as T2T weights its shards.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "t2t/data/batching.h"
#include "t2t/model/attention_probe.h"
#include "t2t/train/step_stats.h"

namespace torch {
namespace optim {
class Optimizer;
}
}  // namespace torch

namespace t2t {

class Communicator;
class FusedAdam;
class GradientReducer;
class HParams;
class T2TModel;

// Adam with the hparams' betas, epsilon and weight decay, learning rate 0
// until TrainStep::run sets it. Throws t2t::Error for an optimizer this
// build does not have.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(T2TModel& model, const HParams& hp);

// "none" -> nullopt, "bf16", "fp16" (CUDA only); OptionError naming
// mixed_precision otherwise.
std::optional<c10::ScalarType> autocast_dtype(const std::string& mixed_precision,
                                              const c10::Device& device);

// The mixed precision a run trains with ("none", "bf16" or "fp16"), from
// the option (`flag`) and T2T's activation_dtype (float32 leaves it to the
// flag). When both ask for something they must agree, else an OptionError
// names both.
std::string effective_mixed_precision(const HParams& hp, const std::string& flag);

struct StepResult {
  bool applied = false;   // false: the update was skipped
  bool overflow = false;  // skipped for an fp16 gradient overflow (expected now and then)
  bool nonfinite = false;  // skipped for a NaN/Inf loss or gradient (counts towards failure)
  double loss_sum = 0;    // label-smoothed loss summed over all workers' target tokens
  double tokens = 0;      // target tokens (non-pad) over all workers and micro-batches
  double input_tokens = 0;  // input tokens (non-pad), counted the same way
  double grad_norm = 0;   // global L2 norm before clipping
};

class TrainStep {
 public:
  // `communicator` null: a single worker. The model and optimizer must
  // outlive this object. `bucket_bytes`: gradient buckets sent while
  // backward runs. `mixed_precision`: see effective_mixed_precision().
  TrainStep(T2TModel& model, torch::optim::Optimizer& optimizer, const HParams& hp,
            const c10::Device& device, const std::string& mixed_precision,
            Communicator* communicator = nullptr, size_t bucket_bytes = 25u << 20);
  ~TrainStep();

  // Queues one update from `micro_batches` at learning rate `lr` and adds
  // its outcome to stats(), reading nothing back: a non-finite (or fp16
  // overflowed) step is skipped on the device and still counts. Every
  // worker must call it as often, with as many micro-batches.
  void queue(const std::vector<Batch>& micro_batches, double lr);

  // queue(), then waits for the step's outcome.
  StepResult run(const std::vector<Batch>& micro_batches, double lr);

  // From now on, a single worker's step of one micro-batch runs at a static
  // shape: the batch padded to its length bucket's bound. With `graphs`
  // (CUDA only), each shape's step is captured into a CUDA graph the second
  // time it comes (the first readies memory and kernels) and replayed from
  // then on. Call it from the thread, and for graphs on the side stream
  // (UseSideStream), every later step runs on. Throws t2t::Error for graphs
  // off CUDA.
  void use_static_shapes(const BatchingScheme& scheme, bool graphs);
  // The shapes met so far, and how many of them are captured.
  size_t static_shapes() const;
  size_t captured_graphs() const;

  // The steps' outcomes, summed on the device.
  StepStats& stats() { return stats_; }

  // fp16 loss scale (1 when not in use) and the overflow-free steps since
  // it changed, for checkpoints. Each waits for the queued steps.
  double loss_scale() const;
  int64_t loss_scale_good_steps() const;
  bool scales_loss() const { return scaling_; }
  // Takes up a saved scale; false (and nothing changes) when this step does
  // not scale its loss. Throws t2t::Error for a scale that is not positive.
  bool restore_loss_scale(double scale, int64_t good_steps);

 private:
  StepOutcome queue_step(const std::vector<Batch>& micro_batches, double lr);
  struct StaticShape;
  StepOutcome queue_static_step(const Batch& batch, double lr);
  StepOutcome static_body(StaticShape& shape);
  // After backward, on the device: unscales and clips the gradients,
  // decides the skip, updates the fp16 scale, fills `out`. Returns
  // found_inf (float32).
  at::Tensor settle(const std::vector<at::Tensor>& grads, const at::Tensor& loss_total,
                    StepOutcome& out);

  T2TModel& model_;
  FusedAdam& optimizer_;
  c10::Device device_;
  StepStats stats_;
  std::optional<c10::ScalarType> autocast_;
  Communicator* communicator_;
  std::unique_ptr<GradientReducer> reducer_;
  double label_smoothing_;
  double clip_norm_;
  // Guided alignment (hparams guided_alignment_*): 0 = off.
  double alignment_weight_ = 0;
  AttentionProbe alignment_probe_;
  // fp16: T2T's schedule, a scale from 2^15 that halves on overflow and
  // doubles after 2000 good steps, kept on the device.
  bool scaling_ = false;
  at::Tensor scale_;       // float32 scalar
  at::Tensor good_steps_;  // int64 scalar
  // use_static_shapes: by [rows, width].
  bool static_ = false, graphs_ = false;
  BatchingScheme scheme_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<StaticShape>> shapes_;
};

}  // namespace t2t
