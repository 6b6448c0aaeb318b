// The best checkpoint of a run by one eval metric, in <output_dir>/best/: a
// copy with its `checkpoint` index (it loads as a run directory), the run's
// hparams.yaml, and best.yaml naming the step and value. keep_checkpoint_max
// never touches it; a restarted run reads best.yaml back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "t2t/train/eval_metrics.h"

namespace t2t {

struct BestRecord {
  std::string metric;
  double value = 0;
  int64_t step = 0;
  std::string checkpoint;  // file name inside best/
};

// Whether `value` beats `best` (strictly; NaN never does) for a metric that
// improves upwards or downwards. No best yet: any finite value does.
bool improves_on(const std::optional<BestRecord>& best, double value, bool higher_is_better);

class BestCheckpoint {
 public:
  // Reads <output_dir>/best/best.yaml, if any; a best by another metric is
  // left for the next evaluation to replace. Throws t2t::Error naming the
  // file when it cannot be read.
  BestCheckpoint(std::string output_dir, const EvalMetricInfo& metric);

  static std::string dir_of(const std::string& output_dir);

  bool improves(double value) const {
    return improves_on(best_, value, metric_.higher_is_better);
  }

  // Copies `checkpoint` and hparams.yaml into best/, then writes best.yaml,
  // each through a temporary file. Returns the path of the copy.
  std::string record(const std::string& checkpoint, int64_t step, double value);

  const std::optional<BestRecord>& best() const { return best_; }
  const EvalMetricInfo& metric() const { return metric_; }

 private:
  std::string output_dir_;
  EvalMetricInfo metric_;
  std::optional<BestRecord> best_;
};

}  // namespace t2t
