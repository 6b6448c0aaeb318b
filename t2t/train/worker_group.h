// What a training run does to keep its data-parallel workers in step:
// joining them, checking at start that they share --output_dir and start
// from the same step with the same weights, bringing a decision one worker
// took (the chief's clock and evaluations) to all of them, and letting the
// chief work alone while the others wait. A single process (no torchrun)
// is a group of one: it joins nothing, agrees with itself and does the
// chief's work at once.
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

  // At start, with other workers (communicator() not null), after every
  // worker resumed: checks that they share --output_dir and found the same
  // `step`, gives them the chief's weights and each its own random stream
  // (`saved_random_states`, by rank, from the checkpoint `resumed_from`;
  // empty: a fresh run). Throws t2t::Error saying what differs.
  void synchronize(int64_t step, T2TModel& model,
                   const std::vector<std::string>& saved_random_states,
                   const std::string& resumed_from);

  // True where any worker said true. Decisions taken on one worker (the
  // chief's clock and evaluations) reach every worker at the same step
  // this way: they must all save, and stop, together.
  std::vector<bool> any_worker(const std::vector<bool>& flags);

  // Work the chief does alone: with other workers, they wait for it however
  // long it takes (Communicator::chief_alone, which runs `work` on the
  // chief only); a single process just does it.
  void by_chief(const std::string& what, const std::function<void()>& work);

  // At the run's normal end: leaves the group (Communicator::leave).
  void leave();

 private:
  void check_shared_output_dir();

  const TrainOptions& options_;
  const WorkerEnv worker_;
  const bool chief_;
  std::unique_ptr<Communicator> communicator_;
};

}  // namespace t2t
