// The training loop's progress lines (and, on the chief, events).
#pragma once

#include <cstdint>

#include "t2t/core/stopwatch.h"

namespace t2t {

class EventWriter;
struct StepReport;

// Loss and throughput since the last progress line.
class ProgressLog {
 public:
  explicit ProgressLog(int64_t step) : first_step_(step), last_step_(step) {}

  void add(const StepReport& r);

  // One line (and, on the chief, one event) for the steps since the last.
  void log(int64_t step, int64_t train_steps, double lr, int world_size, EventWriter* events);

 private:
  int64_t first_step_, last_step_;
  double loss_ = 0, weight_ = 0, tokens_ = 0;
  double alignment_cost_ = 0, aligned_ = 0;
  Stopwatch since_start_, since_log_;
};

}  // namespace t2t
