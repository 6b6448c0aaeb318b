// What the chief makes of each evaluation: recorded in the history, perhaps
// the best checkpoint, perhaps early stopping. Both survive a restart. No
// LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "t2t/train/best_checkpoint.h"
#include "t2t/train/eval_metrics.h"
#include "t2t/train/train_options.h"

namespace t2t {

class EvalDecisions {
 public:
  // Reads back what the run recorded up to `step` (0 for a new run). Throws
  // t2t::Error naming a file it cannot read.
  EvalDecisions(const TrainOptions& options, int64_t step);

  struct Decision {
    bool new_best = false;  // the step needs a checkpoint, then keep_best()
    bool stop = false;      // early stopping: stop_reason() says why
  };

  // Records the evaluation of `step` and decides.
  Decision add(int64_t step, const EvalMetrics& metrics);

  // Why early stopping ends training now; nullopt while it does not.
  std::optional<std::string> stop_reason() const;

  // After add() found a new best: copies `checkpoint` into best/; returns
  // the copy's path.
  std::string keep_best(const std::string& checkpoint, int64_t step);

  // "; the best checkpoint by bleu is step 4000 in O/best", or "" when
  // there is none.
  std::string best_summary() const;

 private:
  EarlyStoppingOptions early_stopping_;
  std::string output_dir_;
  EvalHistory history_;
  std::optional<BestCheckpoint> best_;
  double pending_best_ = 0;  // the value add() found better
};

}  // namespace t2t
