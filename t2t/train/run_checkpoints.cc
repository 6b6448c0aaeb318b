#include "t2t/train/run_checkpoints.h"

#include <torch/torch.h>

#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/model/t2t_model.h"
#include "t2t/train/train_step.h"
#include "t2t/train/worker_group.h"

namespace t2t {

namespace {

// Where each worker's input position lives in a checkpoint: one worker's
// state as it is, several as a YAML list in rank order.
std::string join_reader_states(const std::vector<std::string>& states) {
  if (states.size() == 1) return states.front();
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "worker_reader_states" << YAML::Value << YAML::BeginSeq;
  for (const std::string& s : states) out << YAML::Literal << s;
  out << YAML::EndSeq << YAML::EndMap;
  return out.c_str();
}

}  // namespace

std::optional<ReaderState> reader_state_for(const std::string& saved, const WorkerEnv& worker,
                                            const std::string& source) {
  if (saved.empty()) return std::nullopt;
  YAML::Node node = YAML::Load(saved);
  std::vector<std::string> states;
  if (node.IsMap() && node["worker_reader_states"]) {
    for (const auto& s : node["worker_reader_states"]) states.push_back(s.as<std::string>());
  } else {
    states.push_back(saved);
  }
  if (static_cast<int>(states.size()) != worker.world_size) {
    spdlog::warn("{} was written by {} worker(s), this run has {}: the input position cannot be "
                 "restored, so reading starts afresh (reshuffled by the step)",
                 source, states.size(), worker.world_size);
    return std::nullopt;
  }
  return ReaderState::from_yaml(states[worker.rank], source);
}

int cuda_index(const c10::Device& device) { return device.has_index() ? device.index() : 0; }

RunCheckpoints::RunCheckpoints(const TrainOptions& options, const HParams& hp,
                               const c10::Device& device, WorkerGroup& workers, T2TModel& model,
                               torch::optim::Optimizer& optimizer)
    : options_(options),
      hp_(hp),
      device_(device),
      workers_(workers),
      model_(model),
      optimizer_(optimizer) {}

void RunCheckpoints::resumed_from(const std::string& path, int64_t step) {
  saved_step_ = step;
  saved_path_ = path;
}

void RunCheckpoints::save(const BatchReader& reader, const TrainStep& train_step, int64_t step) {
  std::vector<std::string> states{reader.state().to_yaml()};
  std::vector<std::string> random_states;
  std::vector<std::string> cuda_states;
  if (device_.is_cuda()) cuda_states.push_back(cuda_rng_state(cuda_index(device_)));
  if (Communicator* communicator = workers_.communicator()) {
    states = communicator->all_gather_strings(states.front());
    random_states = communicator->all_gather_strings(cpu_rng_state());
    if (device_.is_cuda()) cuda_states = communicator->all_gather_strings(cuda_states.front());
  }
  workers_.by_chief("the writing of the checkpoint of step " + std::to_string(step), [&] {
    write_checkpoint(train_step, step, states, random_states, cuda_states);
  });
  saved_step_ = step;
}

void RunCheckpoints::write_checkpoint(const TrainStep& train_step, int64_t step,
                                      const std::vector<std::string>& states,
                                      std::vector<std::string>& random_states,
                                      std::vector<std::string>& cuda_states) {
  CheckpointMeta meta;
  meta.step = step;
  meta.hparams_yaml = hp_.to_yaml();
  meta.reader_state = join_reader_states(states);
  meta.worker_rng_states = std::move(random_states);
  meta.worker_cuda_rng_states = std::move(cuda_states);
  if (train_step.scales_loss()) {
    meta.loss_scale = train_step.loss_scale();
    meta.loss_scale_good_steps = train_step.loss_scale_good_steps();
  }
  saved_path_ = save_checkpoint(options_.output_dir, model_, &optimizer_, meta,
                                options_.keep_checkpoint_max);
  spdlog::info("saved {}", saved_path_);
}

}  // namespace t2t
