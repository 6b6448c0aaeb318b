// What a training run is asked to do: the trainer's flags as typed
// options, and the one place that checks them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "t2t/distributed/communicator.h"
#include "t2t/train/early_stopping.h"
#include "t2t/train/eval_metrics.h"

namespace t2t {

// What a run does (option `schedule`).
enum class Schedule {
  kContinuousTrainAndEval,  // train, evaluating every local_eval_frequency steps
  kTrain,                   // train only
  kEvaluate,                // evaluate the latest checkpoint once
};

// "continuous_train_and_eval", "train", "evaluate" (T2T's names). Throws
// OptionError naming schedule otherwise.
Schedule parse_schedule(const std::string& name);
const char* schedule_name(Schedule schedule);

struct TrainOptions {
  std::string problem;      // may end in "_rev"
  std::string model;
  std::string data_dir;
  std::string output_dir;
  std::string device = "cpu";  // resolved already ("cpu", "cuda:0")
  Schedule schedule = Schedule::kContinuousTrainAndEval;
  int64_t train_steps = 250000;
  int64_t eval_steps = 100;
  // Evaluations and checkpoints have cadences of their own; the last step
  // gets both.
  int64_t local_eval_frequency = 1000;
  int64_t save_checkpoints_steps = 0;  // 0: local_eval_frequency
  int64_t save_checkpoints_secs = 0;   // 0: off
  int64_t log_step_count_steps = 100;
  int keep_checkpoint_max = 20;  // 0: keep all
  // At each evaluation, on the chief, after the teacher-forced metrics (BLEU
  // from decoding, when the tool supplies it). May be empty.
  ExtraEvaluation extra_evaluation;
  // The decoded metrics (eval_metrics.h) extra_evaluation reports: bleu,
  // chrf, chrf++, ter.
  std::vector<std::string> extra_metrics;
  // The eval metric (eval_metrics.h) whose best checkpoint is kept in
  // <output_dir>/best/ (best_checkpoint.h); "none": no best/.
  std::string best_metric = "loss";
  // Stop when an eval metric stops improving (continuous_train_and_eval).
  EarlyStoppingOptions early_stopping;
  // A new run (no checkpoint in output_dir yet) starts from the weights of
  // this checkpoint file, or of the latest in this run directory, at step 0
  // with a fresh optimizer; every parameter and buffer must be there with
  // its shape. "": from the initializer. A run that resumes ignores it.
  std::string warm_start_from;
  // Steps whose loss or gradient is NaN/Inf are skipped (no update) and
  // counted; this many in a row stop training, the last checkpoint intact.
  int64_t max_nonfinite_steps = 10;
  // "none", "bf16" (autocast; CPU and CUDA) or "fp16" (autocast with dynamic
  // loss scaling; CUDA only).
  std::string mixed_precision = "none";
  // A CUDA device, one worker, one batch a step: each length bucket's step
  // is captured into a CUDA graph and replayed (TrainStep::use_static_shapes).
  bool cuda_graphs = false;
  uint64_t seed = 429459;
  // With several workers: a collective that gets no answer from a worker
  // within this many seconds ends the run with an error naming it (a
  // worker gone, a link cut) instead of hanging it. The chief's evaluations
  // and checkpoint writes may take longer: the others wait for those as
  // long as the chief shows signs of life.
  int64_t collective_timeout_secs = 300;
  // Set in a data-parallel run (torchrun's environment): this process is one
  // of worker->world_size workers; rank 0 writes checkpoints, events and
  // hparams.yaml and runs the evaluations.
  std::optional<WorkerEnv> worker;
};

// Throws OptionError naming the option for a value or combination the
// trainer cannot honour (train_steps=-5, best_metric=bleu without BLEU, ...).
// run_training() calls it first; a front end may call it earlier.
void check_train_options(const TrainOptions& options);

}  // namespace t2t
