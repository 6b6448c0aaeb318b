// The generic training loop: any registered model on any registered problem.
#pragma once

#include "t2t/core/hparams.h"
#include "t2t/train/train_options.h"

namespace t2t {

// Trains (and evaluates, per `schedule`) until train_steps, resuming from
// output_dir's latest checkpoint. Writes hparams.yaml, checkpoints, events,
// eval/history.yaml and best/. Returns early, after a checkpoint, on early
// stopping or stop_requested() on any worker. A schedule that reads the
// hparam train_steps gets options.train_steps when hparams lack it, as T2T's
// trainer gives it. Throws t2t::Error when
// output_dir holds a run with other hparams.
void run_training(const TrainOptions& options, const HParams& hparams);

}  // namespace t2t
