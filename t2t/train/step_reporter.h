// The host catching up with the device every few steps: the steps'
// outcomes and the workers' save and stop flags, summed over the workers,
// copied off and read a step later.
#pragma once

#include <array>
#include <cstdint>

#include "t2t/train/progress_log.h"
#include "t2t/train/train_options.h"

namespace t2t {

class Communicator;
class EventWriter;
class TrainStep;
struct StepReport;

// Steps between catch-ups: often enough to act on a stop or NaNs soon,
// seldom enough that the GPU never idles for it.
inline constexpr int64_t kReportEvery = 10;

class StepReporter {
 public:
  // Reports on the steps after `step`. `communicator` null: a single
  // worker; `events` null: no progress events (a worker other than the
  // chief). `options`, `communicator` and `events` must outlive it.
  StepReporter(const TrainOptions& options, int world_size, Communicator* communicator,
               int64_t step, EventWriter* events);

  // A report of the steps up to `step`, started by start_report().
  struct PendingReport {
    int64_t step = 0;
    double lr = 0;            // the rate of that step, for the progress line
    bool log = false;         // ends with a progress line
    bool flags[2] = {false, false};  // save time, stop (one worker; else on the device)
  };

  // Starts copying the outcomes up to `step` off the device.
  PendingReport start_report(TrainStep& train_step, int64_t step, double lr, bool log,
                             bool save_time);

  // Reads a started report: logs, checks non-finite steps, and returns the
  // agreed {save time, stop}.
  std::array<bool, 2> finish_report(TrainStep& train_step, const PendingReport& p);

 private:
  void check_nonfinite(const StepReport& r, int64_t step);

  const TrainOptions& options_;
  const int world_size_;
  Communicator* const communicator_;
  EventWriter* const events_;
  ProgressLog progress_;
  int64_t nonfinite_total_ = 0;
};

}  // namespace t2t
