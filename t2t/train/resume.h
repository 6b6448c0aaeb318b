// Where a training run starts. --output_dir holds one of three kinds of
// run: one with a t2t checkpoint, which resumes exactly where that stopped;
// one Tensor2Tensor began (its model.ckpt-N.index and no t2t checkpoint
// yet), which goes on from T2T's weights, Adam's moments and step; or none,
// a fresh run at step 0, perhaps from another run's weights
// (--warm_start_from). The chief also writes hparams.yaml, and refuses a
// run whose saved hparams differ.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t2t/data/batch_reader.h"
#include "t2t/distributed/communicator.h"
#include "t2t/train/train_options.h"

namespace torch {
namespace optim {
class Optimizer;
}
}  // namespace torch

namespace t2t {

class HParams;
class T2TModel;

// What a run takes up from where it starts, beyond the weights and the
// optimizer's state.
struct ResumePoint {
  // The t2t checkpoint resumed from; empty: a fresh run, or one T2T began.
  std::string latest;
  int64_t step = 0;
  // This worker's input position; nullopt: reading starts afresh.
  std::optional<ReaderState> reader_state;
  // Every worker's CPU random state, by rank, as the checkpoint saved them.
  std::vector<std::string> random_states;
  double loss_scale = 0;  // 0: the checkpoint had none
  int64_t loss_scale_good_steps = 0;
};

// Picks up exactly where the last checkpoint stopped: weights, optimizer,
// step, input position and random state. Every worker reads it
// (output_dir must be visible to all); only the chief writes. Loads
// `model` and `optimizer`, restores this worker's CUDA random state; the
// CPU's is the worker group's to set (WorkerGroup::synchronize) with
// several workers, and the checkpoint's own with one.
// Throws t2t::Error when output_dir holds a run with other hparams, or a
// checkpoint or --warm_start_from that cannot be read.
ResumePoint resume_run(const TrainOptions& options, const HParams& hp, const WorkerEnv& worker,
                       const c10::Device& device, T2TModel& model,
                       torch::optim::Optimizer& optimizer);

}  // namespace t2t
