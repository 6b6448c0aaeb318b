// Where a training run starts: a t2t checkpoint resumes exactly; a run T2T
// began (model.ckpt-N.index only) goes on from its weights, Adam moments and
// step; else a fresh run at step 0, perhaps warm-started. The chief writes
// hparams.yaml and refuses a run whose saved hparams differ.
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

// What a run takes up beyond the weights and the optimizer's state.
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

// Loads `model` and `optimizer` and restores this worker's CUDA random
// state (the CPU's is WorkerGroup::synchronize's with several workers).
// Every worker reads output_dir; only the chief writes. Throws t2t::Error
// for a run with other hparams, or a checkpoint or warm start that cannot
// be read.
ResumePoint resume_run(const TrainOptions& options, const HParams& hp, const WorkerEnv& worker,
                       const c10::Device& device, T2TModel& model,
                       torch::optim::Optimizer& optimizer);

}  // namespace t2t
