// A training run's evaluations: the chief evaluates (teacher-forced, plus
// any ExtraEvaluation), logs and writes the eval events, and decides
// (eval_decisions.h) whether the step is the best so far and whether
// early stopping ends training; every worker gets those decisions, so
// that all of them save, and stop, at the same step. When to evaluate is
// the training loop's to say.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "t2t/io/event_writer.h"
#include "t2t/train/eval_decisions.h"
#include "t2t/train/eval_metrics.h"
#include "t2t/train/train_options.h"

namespace t2t {

class HParams;
class Problem;
class T2TModel;
class WorkerGroup;

class RunEvaluations {
 public:
  // Evaluations of `model` on `problem`'s dev split, as `options` and `hp`
  // ask, on `device`; `workers` brings the chief's decisions to every
  // worker. All must outlive it.
  RunEvaluations(const TrainOptions& options, const HParams& hp, const c10::Device& device,
                 WorkerGroup& workers, std::shared_ptr<T2TModel> model, const Problem& problem);

  // The eval events, and what the run made of its evaluations so far, read
  // back on a restart (chief only: it alone evaluates). `step`: the step
  // the run resumes from.
  void open_records(int64_t step);

  // The chief evaluates and decides (eval_decisions.h); every worker gets
  // the decision: whether this step is the best so far (it then needs a
  // checkpoint), whether training stops here.
  EvalDecisions::Decision evaluate_and_decide(int64_t step);

  // Copies the checkpoint of this step (`checkpoint`) into best/.
  void record_best(const std::string& checkpoint, int64_t step);

  // A run that early stopping ended, started again as it was: it stops at
  // once, saying why, rather than train until the next evaluation to find
  // the same.
  bool stopped_early_before(int64_t step);

  // After evaluate_and_decide() said stop at `step`: the chief says why,
  // and names `checkpoint`, the last one.
  void log_early_stop(int64_t step, const std::string& checkpoint) const;

 private:
  EvalMetrics evaluate_and_log(int64_t step);

  const TrainOptions& options_;
  const HParams& hp_;
  const c10::Device device_;
  WorkerGroup& workers_;
  const bool chief_;
  const std::shared_ptr<T2TModel> model_;
  const Problem& problem_;
  std::optional<EventWriter> eval_events_;
  std::optional<EvalDecisions> decisions_;  // chief only
};

}  // namespace t2t
