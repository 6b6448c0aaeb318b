// A training run's checkpoints: the chief's file holds every worker's input
// position and random states, so each worker resumes exactly.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

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
class TrainStep;
class WorkerGroup;

// This worker's input position in `saved` (from the checkpoint `source`):
// nullopt when there is none or another number of workers wrote it (with
// a warning).
std::optional<ReaderState> reader_state_for(const std::string& saved, const WorkerEnv& worker,
                                            const std::string& source);

// The CUDA device whose generator holds a worker's CUDA random state.
int cuda_index(const c10::Device& device);

class RunCheckpoints {
 public:
  // Checkpoints into options.output_dir. All must outlive it.
  RunCheckpoints(const TrainOptions& options, const HParams& hp, const c10::Device& device,
                 WorkerGroup& workers, T2TModel& model, torch::optim::Optimizer& optimizer);

  // The run resumed from its own checkpoint `path` of `step`.
  void resumed_from(const std::string& path, int64_t step);

  // Every worker takes part; the chief alone writes.
  void save(const BatchReader& reader, const TrainStep& train_step, int64_t step);

  int64_t saved_step() const { return saved_step_; }
  const std::string& saved_path() const { return saved_path_; }

 private:
  void write_checkpoint(const TrainStep& train_step, int64_t step,
                        const std::vector<std::string>& states,
                        std::vector<std::string>& random_states,
                        std::vector<std::string>& cuda_states);

  const TrainOptions& options_;
  const HParams& hp_;
  const c10::Device device_;
  WorkerGroup& workers_;
  T2TModel& model_;
  torch::optim::Optimizer& optimizer_;
  int64_t saved_step_ = -1;  // the step of the newest checkpoint of this run
  std::string saved_path_;   // its file (chief only)
};

}  // namespace t2t
