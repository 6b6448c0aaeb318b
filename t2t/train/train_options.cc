#include "t2t/train/train_options.h"

#include <algorithm>
#include <sstream>
#include <tuple>
#include <utility>

#include "t2t/core/error.h"

namespace t2t {

Schedule parse_schedule(const std::string& name) {
  if (name == "continuous_train_and_eval") return Schedule::kContinuousTrainAndEval;
  if (name == "train") return Schedule::kTrain;
  if (name == "evaluate") return Schedule::kEvaluate;
  throw OptionError("schedule", "{schedule}=" + name +
                                    " is not one of train, evaluate, continuous_train_and_eval");
}

const char* schedule_name(Schedule schedule) {
  switch (schedule) {
    case Schedule::kTrain: return "train";
    case Schedule::kEvaluate: return "evaluate";
    case Schedule::kContinuousTrainAndEval: break;
  }
  return "continuous_train_and_eval";
}

void check_train_options(const TrainOptions& o) {
  // "{name}=value", the option written as each front end spells it.
  auto setting = [](const std::string& name, int64_t value) {
    return "{" + name + "}=" + std::to_string(value);
  };
  // 0 steps to train is refused as TF's Estimator refuses max_steps=0:
  // a run that trains nothing is a mistake; schedule=evaluate evaluates.
  if (o.collective_timeout_secs < 1)
    throw OptionError("collective_timeout",
                      setting("collective_timeout", o.collective_timeout_secs) +
                          " must be at least 1 (seconds a worker waits for the others in a "
                          "collective)");
  if (o.cuda_graphs && o.device.rfind("cuda", 0) != 0)
    throw OptionError("cuda_graphs", "{cuda_graphs} captures the training step on a GPU: it "
                                     "needs {device}=cuda, not " + o.device);
  if (o.cuda_graphs && o.worker && o.worker->world_size > 1)
    throw OptionError("cuda_graphs", "{cuda_graphs} trains on one GPU for now (" +
                                         std::to_string(o.worker->world_size) +
                                         " workers here): the gradient all-reduce is not captured "
                                         "yet. Leave it out for several workers");
  if (o.train_steps < 1)
    throw OptionError("train_steps",
                      setting("train_steps", o.train_steps) +
                          " must be at least 1: it is the step training stops at (counted from "
                          "0, a resumed run included). To evaluate the latest checkpoint without "
                          "training, use {schedule}=evaluate.");
  for (auto [name, value] : {std::pair<const char*, int64_t>{"eval_steps", o.eval_steps},
                             {"local_eval_frequency", o.local_eval_frequency},
                             {"log_step_count_steps", o.log_step_count_steps},
                             {"max_nonfinite_steps", o.max_nonfinite_steps}})
    if (value < 1) throw OptionError(name, setting(name, value) + " must be at least 1");
  for (auto [name, value, zero] :
       {std::tuple<const char*, int64_t, const char*>{"save_checkpoints_steps",
                                                      o.save_checkpoints_steps,
                                                      "every {local_eval_frequency} steps"},
        {"save_checkpoints_secs", o.save_checkpoints_secs, "no time-based checkpoints"},
        {"keep_checkpoint_max", o.keep_checkpoint_max, "keep every checkpoint"}})
    if (value < 0)
      throw OptionError(name, setting(name, value) + " must be 0 (" + zero + ") or more");

  // Metrics by name: a name that no evaluation reports would never decide.
  auto check_metric = [&o](const std::string& option, const std::string& metric,
                           const std::string& or_else) {
    if (!find_eval_metric(metric))
      throw OptionError(option, "{" + option + "}=" + metric + " is not an eval metric; use one "
                                "of " + eval_metric_names() + or_else);
    const bool reported = std::find(o.extra_metrics.begin(), o.extra_metrics.end(), metric) !=
                          o.extra_metrics.end();
    if (find_eval_metric(metric)->decoded && !(o.extra_evaluation && reported)) {
      if (metric == "bleu")
        throw OptionError(option, "{" + option + "}=bleu needs {eval_bleu}: without it "
                                  "evaluations have no BLEU (approx_bleu_score is the "
                                  "teacher-forced one)");
      throw OptionError(option, "{" + option + "}=" + metric + " scores decoded translations: "
                                "it needs {eval_bleu} with " + metric + " among "
                                "{eval_decode_metrics}");
    }
  };
  if (o.best_metric != "none") check_metric("best_metric", o.best_metric, ", or none");
  const EarlyStoppingOptions& es = o.early_stopping;
  if (es.steps < 0)
    throw OptionError("eval_early_stopping_steps",
                      setting("eval_early_stopping_steps", es.steps) + " must be 0 (off) or more");
  if (es.steps > 0) {
    if (o.schedule != Schedule::kContinuousTrainAndEval)
      throw OptionError("eval_early_stopping_steps",
                        std::string("{eval_early_stopping_steps} stops training on evaluations: "
                                    "it needs {schedule}=continuous_train_and_eval, not ") +
                            schedule_name(o.schedule));
    check_metric("eval_early_stopping_metric", es.metric, "");
    if (!(es.delta >= 0)) {
      std::ostringstream value;
      value << es.delta;
      throw OptionError("eval_early_stopping_metric_delta",
                        "{eval_early_stopping_metric_delta}=" + value.str() +
                            " must be 0 or more: it is the least improvement that counts");
    }
    const bool higher = find_eval_metric(es.metric)->higher_is_better;
    if (es.minimize == higher)
      throw OptionError("eval_early_stopping_metric_minimize",
                        "{eval_early_stopping_metric}=" + es.metric + " improves as it " +
                            (higher ? "grows" : "falls") +
                            ": set {eval_early_stopping_metric_minimize}=" +
                            (higher ? "false" : "true"));
  }
}

}  // namespace t2t
