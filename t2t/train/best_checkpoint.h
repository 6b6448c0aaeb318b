// The best checkpoint of a run by one eval metric (--best_metric), kept in
// <output_dir>/best/: a copy of the checkpoint file with its `checkpoint`
// index (so t2t-decoder --checkpoint_path=<output_dir>/best, t2t-avg-all
// --model_dir and t2t-serve --checkpoint_path load it like any run
// directory), the run's hparams.yaml, and best.yaml saying which step won
// with which value. keep_checkpoint_max never touches it, and a restarted
// run reads best.yaml back, so a worse evaluation after a restart does not
// replace it.
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
  // Reads <output_dir>/best/best.yaml when there is one. A best kept by
  // another metric is not comparable: it is left for the next evaluation to
  // replace, with a log line. Throws t2t::Error naming the file when it
  // cannot be read.
  BestCheckpoint(std::string output_dir, const EvalMetricInfo& metric);

  static std::string dir_of(const std::string& output_dir);

  bool improves(double value) const {
    return improves_on(best_, value, metric_.higher_is_better);
  }

  // Makes `checkpoint` (a file of the run at `step`) the best: copies it,
  // and the run's hparams.yaml, into best/ and writes best.yaml last, each
  // through a temporary file. Returns the path of the copy.
  std::string record(const std::string& checkpoint, int64_t step, double value);

  const std::optional<BestRecord>& best() const { return best_; }
  const EvalMetricInfo& metric() const { return metric_; }

 private:
  std::string output_dir_;
  EvalMetricInfo metric_;
  std::optional<BestRecord> best_;
};

}  // namespace t2t
