#include "t2t/train/worker_group.h"

#include <unistd.h>
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/distributed/network_address.h"
#include "t2t/model/t2t_model.h"

namespace t2t {

namespace fs = std::filesystem;

WorkerGroup::WorkerGroup(const TrainOptions& options, const WorkerEnv& worker)
    : options_(options), worker_(worker), chief_(worker.rank == 0) {}

void WorkerGroup::connect(const c10::Device& device) {
  if (worker_.world_size > 1) {
    CommunicatorTimeouts timeouts;
    timeouts.collective = std::chrono::seconds(options_.collective_timeout_secs);
    communicator_ = Communicator::connect(worker_, device, timeouts);
    spdlog::info("worker {} of {} joined ({} on {})", worker_.rank, worker_.world_size,
                 communicator_->backend(), options_.device);
  }
}

// Every worker must see the chief's --output_dir, where the chief alone
// writes checkpoints that every worker resumes from: the chief leaves a
// file of its own there and the others look for it. Said at start, not
// when a restart an hour later finds the checkpoints on one host only.
void WorkerGroup::check_shared_output_dir() {
  const fs::path marker = fs::path(options_.output_dir) / ".t2t-shared-check";
  std::string token;
  if (chief_) {
    token = std::to_string(std::random_device{}()) + "-" + std::to_string(::getpid());
    write_file_atomic(marker.string(), token);
  }
  // A collective: the chief's file is written before anyone looks.
  const std::string want = communicator_->all_gather_strings(token)[0];
  std::string seen;
  try {
    seen = read_file(marker.string());
  } catch (const Error&) {
  }
  const std::string mine =
      seen == want ? std::string()
                   : "worker " + std::to_string(worker_.rank) + " (host " + host_name() + ") " +
                         (seen.empty() ? "finds no " : "finds another run's ") +
                         marker.string();
  std::vector<std::string> problems;
  for (const std::string& p : communicator_->all_gather_strings(mine))
    if (!p.empty()) problems.push_back(p);
  if (chief_) {
    std::error_code ec;
    fs::remove(marker, ec);
  }
  if (!problems.empty())
    throw OptionError("output_dir", "{output_dir}=" + options_.output_dir + " is not one "
                                    "directory that every worker sees: " + join(problems, "; ") +
                                    ", which worker 0 wrote. Worker 0 alone writes checkpoints "
                                    "there and every worker resumes from them: put it on a file "
                                    "system all machines share");
}

void WorkerGroup::synchronize(int64_t step, T2TModel& model,
                              const std::vector<std::string>& saved_random_states,
                              const std::string& resumed_from) {
  check_shared_output_dir();
  // Workers that resumed from different steps would run different numbers
  // of steps and wait on each other for ever.
  at::Tensor chief_step = torch::tensor({step}, torch::kInt64).to(communicator_->device());
  communicator_->broadcast(chief_step);
  const int64_t chief_found = chief_step.cpu().item<int64_t>();
  if (chief_found != step)
    throw OptionError("output_dir", "worker " + std::to_string(worker_.rank) + " found step " +
                                        std::to_string(step) + " in {output_dir}=" +
                                        options_.output_dir + " but worker 0 found step " +
                                        std::to_string(chief_found) +
                                        ": every worker must see the same {output_dir} (a "
                                        "shared file system)");
  // Identical starting weights, then distinct dropout masks per worker:
  // each worker's own stream where the checkpoint saved one per worker.
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) communicator_->broadcast(p);
  for (auto& b : model.buffers()) communicator_->broadcast(b);
  if (static_cast<int>(saved_random_states.size()) == worker_.world_size) {
    set_cpu_rng_state(saved_random_states[static_cast<size_t>(worker_.rank)]);
    return;
  }
  if (chief_ && !resumed_from.empty())
    spdlog::warn("{} holds the random states of {} worker(s), this run has {}: dropout is "
                 "reseeded by worker and step, so the run will not repeat an uninterrupted "
                 "one exactly",
                 resumed_from, saved_random_states.size(), worker_.world_size);
  torch::manual_seed(options_.seed + 1000003ull * static_cast<uint64_t>(worker_.rank) +
                     static_cast<uint64_t>(step));
}

std::vector<bool> WorkerGroup::any_worker(const std::vector<bool>& flags) {
  if (!communicator_) return flags;
  const std::vector<double> mine(flags.begin(), flags.end());
  at::Tensor t = torch::tensor(mine, torch::kFloat64).to(communicator_->device());
  communicator_->all_reduce_sum(t);
  t = t.cpu().contiguous();
  const double* sums = t.data_ptr<double>();
  std::vector<bool> out(flags.size());
  for (size_t i = 0; i < flags.size(); ++i) out[i] = sums[i] > 0;
  return out;
}

void WorkerGroup::by_chief(const std::string& what, const std::function<void()>& work) {
  if (communicator_)
    communicator_->chief_alone(what, work);
  else
    work();
}

void WorkerGroup::leave() {
  if (communicator_) communicator_->leave();
}

}  // namespace t2t
