// The generic training loop: any registered model on any registered problem,
// driven by TrainOptions (the trainer's flags) and the final hparams.
#pragma once

#include "t2t/core/hparams.h"
#include "t2t/train/train_options.h"

namespace t2t {

// Trains (and evaluates, per `schedule`) until train_steps, resuming from the
// latest checkpoint in output_dir when there is one. Writes hparams.yaml,
// checkpoints, TensorBoard events (output_dir and output_dir/eval), the
// evaluation history (output_dir/eval/history.yaml) and the best checkpoint
// (output_dir/best). Returns early, after saving a checkpoint, when early
// stopping says the metric has stopped improving, or after the current step
// when stop_requested() (stop_request.h) turns true on any worker.
// Throws t2t::Error when output_dir holds a run with other hparams.
void run_training(const TrainOptions& options, const HParams& hparams);

}  // namespace t2t
