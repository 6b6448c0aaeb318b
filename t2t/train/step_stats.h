// What the training steps did, summed on the device and read by the host
// only now and then: a per-step read would stall the GPU every step.
// snapshot() copies the sums to pinned memory behind an event, which
// take() waits for once the next step is queued.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace c10 {
struct Event;
}

namespace t2t {

// The steps since the last snapshot.
struct StepReport {
  int64_t steps = 0;       // updates queued
  int64_t applied = 0;     // ... of which applied
  int64_t overflow = 0;    // ... skipped for an fp16 gradient overflow
  int64_t nonfinite = 0;   // ... skipped for a NaN/Inf loss or gradient
  int64_t nonfinite_run = 0;      // non-finite steps in a row at the snapshot
  int64_t max_nonfinite_run = 0;  // the longest such run since the last snapshot
  double loss_sum = 0;     // label-smoothed loss over the applied steps' target tokens
  double tokens = 0;       // target tokens of the applied steps (all workers)
  double input_tokens = 0;  // their input tokens
  double grad_norm = 0;    // the last applied step's norm before clipping
  // Guided alignment: its cost summed over the applied steps' aligned
  // target positions (this worker's), and their number.
  double alignment_cost = 0;
  double aligned_positions = 0;
  std::vector<double> extra;  // what snapshot() was asked to carry along
};

// One step's outcome, as TrainStep leaves it: float64 scalars on the
// device (skipped, overflow and nonfinite are 0 or 1).
struct StepOutcome {
  at::Tensor loss_sum, tokens, input_tokens, grad_norm, overflow, nonfinite;
  // Guided alignment only (else undefined): cost and aligned positions.
  at::Tensor alignment_cost, aligned_positions;
};

class StepStats {
 public:
  explicit StepStats(const c10::Device& device);
  ~StepStats();
  StepStats(const StepStats&) = delete;
  StepStats& operator=(const StepStats&) = delete;

  // Adds one step; queues a few scalar kernels, reads nothing.
  void add(const StepOutcome& step);

  // Starts copying the sums (and `extra`, float64 scalars on the device) to
  // the host and starts new sums.
  void snapshot(const std::vector<at::Tensor>& extra = {});
  bool pending() const { return pending_; }
  // Waits for the last snapshot's copy and returns it.
  StepReport take();

 private:
  c10::Device device_;
  at::Tensor sums_;  // float64 [kSlots] on the device
  at::Tensor host_;  // where snapshot() copies to: pinned for a GPU
  std::unique_ptr<c10::Event> copied_;
  bool pending_ = false;
  size_t extra_ = 0;
};

}  // namespace t2t
