// Keeps a training run's data-parallel workers in step: joins them, checks
// at start that they share the output directory, step and weights, brings
// one worker's decisions to all, and lets the chief work alone while the
// others wait. A single process is a group of one.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "t2t/distributed/communicator.h"
#include "t2t/train/train_options.h"

namespace t2t {

class T2TModel;

class WorkerGroup {
 public:
  // This process as `worker` of the run `options` describes; joins nothing
  // until connect(). `options` must outlive the group.
  WorkerGroup(const TrainOptions& options, const WorkerEnv& worker);

  // Joins the other workers (and says so), when there are any.
  void connect(const c10::Device& device);

  // Worker 0, which alone writes and evaluates.
  bool chief() const { return chief_; }

  // Null for a single worker.
  Communicator* communicator() const { return communicator_.get(); }

  // After every worker resumed: checks they share the output directory and
  // `step`, gives them the chief's weights and each its random stream
  // (`saved_random_states` by rank, from `resumed_from`; empty: a fresh
  // run). Throws t2t::Error saying what differs.
  void synchronize(int64_t step, T2TModel& model,
                   const std::vector<std::string>& saved_random_states,
                   const std::string& resumed_from);

  // True where any worker said true, so all save and stop together.
  std::vector<bool> any_worker(const std::vector<bool>& flags);

  // Runs `work` on the chief alone while the others wait however long it
  // takes (Communicator::chief_alone).
  void by_chief(const std::string& what, const std::function<void()>& work);

  // At the run's normal end (Communicator::leave).
  void leave();

 private:
  void check_shared_output_dir();

  const TrainOptions& options_;
  const WorkerEnv worker_;
  const bool chief_;
  std::unique_ptr<Communicator> communicator_;
};

}  // namespace t2t
