// One optimizer update, shared by the trainer and the training benchmark:
// forward and backward over this worker's micro-batches, gradients summed
// across data-parallel workers, clipping, a non-finite check and the Adam
// step.
//
// The gradient is that of the loss averaged over every target token of
// every micro-batch on every worker, so N workers with batch B each (or one
// worker accumulating N micro-batches of B) train exactly as one worker
// with batch N·B: T2T weights its GPU shards by tokens the same way.
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
// --mixed_precision (`flag`) and T2T's hparam activation_dtype, which asks
// for the same in T2T's words: float32 leaves it to the flag, bfloat16 means
// bf16 and float16 fp16. Either one alone decides; when both ask for
// something they must agree, else an OptionError names both. TrainStep applies
// it; a front end may call it first to report the mode (and errors) early.
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
  // outlive this object; the model is put in train() mode by run().
  // `bucket_bytes`: the size of the gradient buckets sent while backward
  // runs (several workers only).
  // `mixed_precision`: --mixed_precision, combined with hp's
  // activation_dtype by effective_mixed_precision().
  TrainStep(T2TModel& model, torch::optim::Optimizer& optimizer, const HParams& hp,
            const c10::Device& device, const std::string& mixed_precision,
            Communicator* communicator = nullptr, size_t bucket_bytes = 25u << 20);
  ~TrainStep();

  // Queues one update from this worker's `micro_batches` (one, or
  // optimizer_multistep_accumulate_steps of them) at learning rate `lr`,
  // and adds its outcome to stats(). Nothing is read back from the device:
  // a step whose loss or gradient is not finite (in fp16, whose gradient
  // overflowed) is skipped there, by the optimizer, and still counts as a
  // step. Every worker must call it the same number of times with the
  // same number of micro-batches.
  void queue(const std::vector<Batch>& micro_batches, double lr);

  // queue(), then waits for the step's outcome: for tests and tools that
  // look at every step.
  StepResult run(const std::vector<Batch>& micro_batches, double lr);

  // From now on, a step of one micro-batch (on a single worker) runs at a
  // static shape: the batch is padded to its length bucket's upper bound
  // (`scheme`'s), so that each bucket's batches share one shape, and the
  // step reads nothing from the host that changes between steps. With
  // `graphs` (a CUDA device only), each shape's step is captured into a
  // CUDA graph the second time the shape comes, and replayed from then on:
  // a step costs one launch instead of thousands. The first time runs as
  // usual, which readies what a capture cannot (the gradients' memory,
  // LibTorch's kernels and workspaces). Call it from the thread and, for
  // graphs, on the side stream (UseSideStream) every later step runs on.
  // Throws t2t::Error for graphs on another device.
  void use_static_shapes(const BatchingScheme& scheme, bool graphs);
  // The shapes met so far, and how many of them are captured.
  size_t static_shapes() const;
  size_t captured_graphs() const;

  // The steps' outcomes, summed on the device.
  StepStats& stats() { return stats_; }

  // fp16 dynamic loss scale (1 when not in use), and the overflow-free
  // steps since it last changed: what a checkpoint keeps so that a resumed
  // run scales its loss as an uninterrupted one does. Each reads the
  // device (waits for the queued steps).
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
  // After backward: the gradients unscaled (fp16) and clipped, the step's
  // skip decided and the fp16 scale updated, all on the device; fills
  // `out`'s norm, loss, overflow and nonfinite. Returns found_inf (float32).
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
  // fp16: the loss is multiplied by a scale that halves on overflow and
  // doubles after 2000 good steps, T2T's schedule, starting at 2^15. Both
  // live on the device, where the overflow is found.
  bool scaling_ = false;
  at::Tensor scale_;       // float32 scalar
  at::Tensor good_steps_;  // int64 scalar
  // use_static_shapes: by [rows, width].
  bool static_ = false, graphs_ = false;
  BatchingScheme scheme_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<StaticShape>> shapes_;
};

}  // namespace t2t
