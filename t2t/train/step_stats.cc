#include "t2t/train/step_stats.h"

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "t2t/core/error.h"

namespace t2t {

namespace {

// The slots of the sums.
enum Slot : int64_t {
  kSteps, kApplied, kOverflow, kNonfinite,  // counts
  kRun, kMaxRun,                            // non-finite steps in a row
  kLoss, kTokens, kInputTokens,             // over the applied steps
  kGradNorm,                                // the last applied step's
  kAlignCost, kAlignPositions,              // guided alignment, applied steps
  kSlots
};

}  // namespace

StepStats::StepStats(const c10::Device& device) : device_(device) {
  sums_ = at::zeros({kSlots}, at::TensorOptions().dtype(at::kDouble).device(device));
}

StepStats::~StepStats() = default;

void StepStats::add(const StepOutcome& s) {
  const at::Tensor skipped = at::clamp_max(s.overflow + s.nonfinite, 1.0);
  const at::Tensor applied = 1.0 - skipped;
  // Counts, then the sums over applied steps: one add each. A skipped
  // step's loss may be NaN, and NaN * 0 is NaN: where() keeps it out.
  const at::Tensor one = at::ones({}, sums_.options());
  sums_.slice(0, kSteps, kNonfinite + 1).add_(at::stack({one, applied, s.overflow, s.nonfinite}));
  const at::Tensor kept =
      at::where(applied.to(at::kBool), at::stack({s.loss_sum, s.tokens, s.input_tokens}),
                at::zeros({3}, sums_.options()));
  sums_.slice(0, kLoss, kInputTokens + 1).add_(kept);
  at::Tensor run = sums_.select(0, kRun);
  if (s.alignment_cost.defined())
    sums_.slice(0, kAlignCost, kAlignPositions + 1)
        .add_(at::where(applied.to(at::kBool),
                        at::stack({s.alignment_cost.to(at::kDouble),
                                   s.aligned_positions.to(at::kDouble)}),
                        at::zeros({2}, sums_.options())));
  run.add_(1.0).mul_(s.nonfinite);
  sums_.select(0, kMaxRun).copy_(at::maximum(sums_.select(0, kMaxRun), run));
  sums_.select(0, kGradNorm).copy_(at::where(applied.to(at::kBool), s.grad_norm,
                                             sums_.select(0, kGradNorm)));
}

void StepStats::snapshot(const std::vector<at::Tensor>& extra) {
  if (pending_) throw Error("StepStats::snapshot: the last snapshot was not taken");
  std::vector<at::Tensor> parts{sums_};
  for (const auto& e : extra) parts.push_back(e.to(sums_.device(), at::kDouble).reshape({1}));
  const at::Tensor all = parts.size() == 1 ? sums_.clone() : at::cat(parts);
  extra_ = extra.size();
  const bool gpu = device_.is_cuda();
  if (!host_.defined() || host_.numel() != all.numel())
    host_ = at::empty({all.numel()}, at::TensorOptions().dtype(at::kDouble).pinned_memory(gpu));
  host_.copy_(all, /*non_blocking=*/gpu);
  if (gpu) {
    if (!copied_) copied_ = std::make_unique<c10::Event>(device_.type());
    copied_->record(c10::impl::getDeviceGuardImpl(device_.type())->getStream(device_));
  }
  // New sums; the run of non-finite steps goes on across snapshots, and
  // the longest run starts from it.
  const at::Tensor run = sums_.select(0, kRun).clone();
  sums_.zero_();
  sums_.select(0, kRun).copy_(run);
  sums_.select(0, kMaxRun).copy_(run);
  pending_ = true;
}

StepReport StepStats::take() {
  if (!pending_) throw Error("StepStats::take: no snapshot was started");
  if (copied_) copied_->synchronize();
  pending_ = false;
  const double* v = host_.data_ptr<double>();
  StepReport r;
  r.steps = static_cast<int64_t>(v[kSteps]);
  r.applied = static_cast<int64_t>(v[kApplied]);
  r.overflow = static_cast<int64_t>(v[kOverflow]);
  r.nonfinite = static_cast<int64_t>(v[kNonfinite]);
  r.nonfinite_run = static_cast<int64_t>(v[kRun]);
  r.max_nonfinite_run = static_cast<int64_t>(v[kMaxRun]);
  r.loss_sum = v[kLoss];
  r.tokens = v[kTokens];
  r.input_tokens = v[kInputTokens];
  r.grad_norm = v[kGradNorm];
  r.alignment_cost = v[kAlignCost];
  r.aligned_positions = v[kAlignPositions];
  r.extra.assign(v + kSlots, v + kSlots + extra_);
  return r;
}

}  // namespace t2t
