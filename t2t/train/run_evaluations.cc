#include "t2t/train/run_evaluations.h"

#include <torch/torch.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/evaluation.h"
#include "t2t/train/worker_group.h"

namespace t2t {

namespace fs = std::filesystem;

RunEvaluations::RunEvaluations(const TrainOptions& options, const HParams& hp,
                               const c10::Device& device, WorkerGroup& workers,
                               std::shared_ptr<T2TModel> model, const Problem& problem)
    : options_(options),
      hp_(hp),
      device_(device),
      workers_(workers),
      chief_(workers.chief()),
      model_(std::move(model)),
      problem_(problem) {}

// The chief evaluates alone (the others wait at their next collective);
// it logs and writes the eval events and returns the metrics by name
// (eval_metrics.h). Empty on the other workers.
EvalMetrics RunEvaluations::evaluate_and_log(int64_t step) {
  if (!chief_) return {};
  Stopwatch timer;
  const EvalResult r = evaluate(*model_, problem_, options_.data_dir, hp_, options_.eval_steps,
                                options_.seed, device_);
  spdlog::info("eval at step {}: loss {:.4f}, accuracy {:.4f}, top-5 {:.4f}, "
               "neg_log_perplexity {:.4f}, approx BLEU {:.4f} (argmax ids vs labels, not a "
               "real BLEU) ({} tokens, {:.1f} s)",
               step, r.loss, r.accuracy, r.accuracy_top5, -r.loss, r.approx_bleu, r.tokens,
               timer.seconds());
  EvalMetrics metrics{{"loss", r.loss},
                      {"accuracy", r.accuracy},
                      {"accuracy_top5", r.accuracy_top5},
                      {"neg_log_perplexity", -r.loss},
                      {"approx_bleu_score", r.approx_bleu}};
  if (options_.extra_evaluation) {
    EvalMetrics extra;
    {
      torch::NoGradGuard no_grad;
      extra = options_.extra_evaluation(model_, step);
    }
    model_->train();
    for (const auto& [name, value] : extra) {
      const EvalMetricInfo* info = find_eval_metric(name);
      spdlog::info("eval at step {}: {} {:.4f}", step, info ? info->event_tag : name, value);
      metrics[name] = value;
    }
  }
  std::vector<std::pair<std::string, double>> scalars;
  for (const auto& [name, value] : metrics) {
    const EvalMetricInfo* info = find_eval_metric(name);
    scalars.emplace_back(info ? info->event_tag : name, value);
  }
  eval_events_->add_scalars(step, scalars);
  eval_events_->flush();
  return metrics;
}

void RunEvaluations::open_records(int64_t step) {
  eval_events_.emplace((fs::path(options_.output_dir) / "eval").string());
  decisions_.emplace(options_, step);
}

EvalDecisions::Decision RunEvaluations::evaluate_and_decide(int64_t step) {
  EvalDecisions::Decision d;
  workers_.by_chief("the evaluation at step " + std::to_string(step),
                    [&] { d = decisions_->add(step, evaluate_and_log(step)); });
  const std::vector<bool> agreed = workers_.any_worker({d.new_best, d.stop});
  return {agreed[0], agreed[1]};
}

void RunEvaluations::record_best(const std::string& checkpoint, int64_t step) {
  workers_.by_chief("the copy of step " + std::to_string(step) + " into best/",
                    [&] { decisions_->keep_best(checkpoint, step); });
}

bool RunEvaluations::stopped_early_before(int64_t step) {
  if (options_.schedule != Schedule::kContinuousTrainAndEval || options_.early_stopping.steps <= 0)
    return false;
  const std::optional<std::string> why = chief_ ? decisions_->stop_reason() : std::nullopt;
  if (!workers_.any_worker({why.has_value()})[0]) return false;
  if (chief_)
    spdlog::info("this run stopped early before, and still would at step {}: {}. To train on, "
                 "raise eval_early_stopping_steps or lower "
                 "eval_early_stopping_metric_delta (eval_early_stopping_steps=0 turns it "
                 "off){}",
                 step, *why, decisions_->best_summary());
  return true;
}

void RunEvaluations::log_early_stop(int64_t step, const std::string& checkpoint) const {
  if (chief_)
    spdlog::info("early stopping at step {}: {}. Last checkpoint {}{}", step,
                 decisions_->stop_reason().value_or(""), checkpoint, decisions_->best_summary());
}

}  // namespace t2t
