#include "t2t/train/eval_decisions.h"

#include <filesystem>

#include "t2t/core/logging.h"
#include "t2t/train/early_stopping.h"

namespace t2t {

EvalDecisions::EvalDecisions(const TrainOptions& options, int64_t step)
    : early_stopping_(options.early_stopping),
      output_dir_(options.output_dir),
      history_((std::filesystem::path(options.output_dir) / "eval" / "history.yaml").string(),
               step) {
  if (const EvalMetricInfo* metric = find_eval_metric(options.best_metric))
    best_.emplace(options.output_dir, *metric);
}

EvalDecisions::Decision EvalDecisions::add(int64_t step, const EvalMetrics& metrics) {
  history_.record(step, metrics);
  Decision d;
  if (best_) {
    auto it = metrics.find(best_->metric().name);
    if (it != metrics.end() && best_->improves(it->second)) {
      d.new_best = true;
      pending_best_ = it->second;
    }
  }
  d.stop = stop_reason().has_value();
  return d;
}

std::optional<std::string> EvalDecisions::stop_reason() const {
  return early_stopping_reason(history_.series(early_stopping_.metric), early_stopping_);
}

std::string EvalDecisions::keep_best(const std::string& checkpoint, int64_t step) {
  const std::string copy = best_->record(checkpoint, step, pending_best_);
  spdlog::info("new best {} {:.4f} at step {}: kept as {}", best_->metric().name, pending_best_,
               step, copy);
  return copy;
}

std::string EvalDecisions::best_summary() const {
  if (!best_ || !best_->best()) return "";
  const BestRecord& b = *best_->best();
  return "; the best checkpoint by " + b.metric + " is step " + std::to_string(b.step) + " in " +
         BestCheckpoint::dir_of(output_dir_);
}

}  // namespace t2t
