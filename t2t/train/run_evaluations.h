// A training run's evaluations: the chief evaluates, writes the eval
// events and decides (eval_decisions.h) about the best checkpoint and early
// stopping; every worker gets the decisions, so all save and stop at the
// same step.
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
  // Evaluations of `model` on `problem`'s dev split. All must outlive it.
  RunEvaluations(const TrainOptions& options, const HParams& hp, const c10::Device& device,
                 WorkerGroup& workers, std::shared_ptr<T2TModel> model, const Problem& problem);

  // Opens the eval events and reads back the evaluations up to `step`, the
  // step resumed from (chief only).
  void open_records(int64_t step);

  // Every worker gets the chief's decision.
  EvalDecisions::Decision evaluate_and_decide(int64_t step);

  // Copies the checkpoint of this step (`checkpoint`) into best/.
  void record_best(const std::string& checkpoint, int64_t step);

  // Whether early stopping had already ended the run at `step` (a restart
  // then stops at once, saying why).
  bool stopped_early_before(int64_t step);

  // The chief says why training stopped at `step`, naming `checkpoint`.
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
