#include "t2t/train/resume.h"

#include <torch/torch.h>

#include <filesystem>
#include <utility>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"
#include "t2t/train/run_checkpoints.h"
#include "t2t/train/tf_adam_state.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// A run's hparams are fixed once it has a checkpoint: resuming with others
// would silently train a different model.
void check_or_write_hparams(const std::string& output_dir, const HParams& hp, bool resuming) {
  const std::string path = (fs::path(output_dir) / "hparams.yaml").string();
  if (resuming && fs::exists(path)) {
    const HParams saved = HParams::from_yaml_file(path);
    // A key the saved file lacks was added to t2t after the run began: the
    // run takes it up with this value (said once), rather than become
    // impossible to resume. Any other difference is refused.
    // train_steps is --train_steps (run_training), which may change from
    // one call to the next, as in T2T, and a schedule that reads it with it.
    std::vector<std::string> added, diff;
    for (const std::string& line : saved.diff(hp)) {
      if (starts_with(line, "train_steps: ")) continue;
      (line.find(": (absent) -> ") != std::string::npos ? added : diff).push_back(line);
    }
    if (!added.empty())
      spdlog::info("{} lacks hparams added to t2t since the run began; taking them as {}", path,
                   join(added, "; "));
    if (!diff.empty())
      throw OptionError("output_dir", "{output_dir}=" + output_dir + " holds a run trained with "
                                      "other hparams (" + join(diff, "; ") + "). Use a new "
                                      "{output_dir}, or the same {hparams_set} and {hparams} as "
                                      "before.");
  }
  hp.save_yaml(path);
}

// One resume_run(): finds which kind of run output_dir holds and takes it
// up into the model and the optimizer.
class Resume {
 public:
  Resume(const TrainOptions& options, const HParams& hp, const WorkerEnv& worker,
         const c10::Device& device, T2TModel& model, torch::optim::Optimizer& optimizer)
      : options_(options),
        hp_(hp),
        worker_(worker),
        chief_(worker_.rank == 0),
        device_(device),
        model_(&model),
        optimizer_(&optimizer) {}

  ResumePoint run() {
    resume();
    ResumePoint point;
    point.latest = std::move(latest_);
    point.step = step_;
    point.reader_state = std::move(reader_state_);
    point.random_states = std::move(saved_random_states_);
    point.loss_scale = saved_loss_scale_;
    point.loss_scale_good_steps = saved_loss_scale_good_steps_;
    return point;
  }

 private:
  // Picks up exactly where the last checkpoint stopped: weights, optimizer,
  // step, input position and random state. Every worker reads it
  // (output_dir must be visible to all); only the chief writes.
  void resume() {
    latest_ = latest_checkpoint(options_.output_dir);
    // A run Tensor2Tensor began, with no t2t checkpoint yet.
    const std::string tensorflow =
        latest_.empty() ? find_tf_checkpoint(options_.output_dir) : std::string();
    if (chief_)
      check_or_write_hparams(options_.output_dir, hp_, !latest_.empty() || !tensorflow.empty());
    if (latest_.empty() && tensorflow.empty()) {
      warm_start();
      return;
    }
    if (!options_.warm_start_from.empty() && chief_)
      spdlog::info("warm_start_from={} is ignored: {} holds a checkpoint already, and the run "
                   "resumes from it",
                   options_.warm_start_from, options_.output_dir);
    if (!tensorflow.empty()) {
      resume_from_tensorflow(tensorflow);
      return;
    }
    CheckpointMeta meta = load_checkpoint(latest_, *model_, optimizer_, true);
    step_ = meta.step;
    saved_random_states_ = std::move(meta.worker_rng_states);
    saved_loss_scale_ = meta.loss_scale;
    saved_loss_scale_good_steps_ = meta.loss_scale_good_steps;
    reader_state_ = reader_state_for(meta.reader_state, worker_, latest_);
    spdlog::info("resuming from {} at step {}", latest_, step_);
    restore_cuda_random_state(meta.worker_cuda_rng_states);
  }

  // T2T's own checkpoint (model.ckpt-N.index): its weights, Adam's moments
  // and step count, and its global_step, so that the learning-rate schedule
  // goes on where T2T stopped. T2T keeps no input position, so reading
  // starts afresh, reshuffled by the step, as after a change in the number
  // of workers; the random states start from the seed. t2t's checkpoints
  // then go beside T2T's, and the next resume takes those.
  void resume_from_tensorflow(const std::string& prefix) {
    const TFCheckpointReader reader(prefix);
    if (!reader.has("global_step"))
      throw OptionError("warm_start_from", "T2T checkpoint " + prefix + " has no global_step: was "
                                           "it written by T2T's trainer? To start afresh from "
                                           "its weights, use {warm_start_from} in a new "
                                           "{output_dir}");
    tensorflow_import(*model_).load_tensorflow(reader, kT2TTargetSpace);
    load_adam_state_from_tf(*optimizer_, *model_, reader, hp_, kT2TTargetSpace);
    step_ = reader.read_scalar_int("global_step");
    spdlog::info("resuming T2T's run from {} at step {}: its weights and Adam's moments; input "
                 "reading starts afresh (T2T keeps no position), reshuffled by the step",
                 prefix, step_);
  }

  // T2T's --warm_start_from: a new run takes a trained model's weights and
  // nothing else (step 0, a fresh optimizer, its own random state). Every
  // worker reads the file, as every worker reads a checkpoint it resumes.
  void warm_start() {
    const std::string& from = options_.warm_start_from;
    if (from.empty()) return;
    // A t2t checkpoint (model.ckpt-N.pt), or one Tensor2Tensor wrote (its
    // prefix model.ckpt-N, or its output directory).
    std::string path = from, tensorflow;
    if (is_tf_checkpoint(from)) {
      tensorflow = from;
    } else if (fs::is_directory(from)) {
      path = latest_checkpoint(from);
      if (path.empty()) tensorflow = find_tf_checkpoint(from);
      if (path.empty() && tensorflow.empty())
        throw OptionError("warm_start_from", "{warm_start_from}=" + from + " holds no checkpoint "
                                             "(model.ckpt-N.pt, or T2T's model.ckpt-N.index)");
    } else if (!fs::exists(from)) {
      throw OptionError("warm_start_from", "{warm_start_from}=" + from + " does not exist; give a "
                                           "model.ckpt-N.pt file, T2T's model.ckpt-N (without "
                                           ".index), or a run directory (its latest checkpoint)");
    }
    int64_t trained = 0;
    try {
      if (!tensorflow.empty()) {
        path = tensorflow;
        const TFCheckpointReader reader(tensorflow);
        tensorflow_import(*model_).load_tensorflow(reader, kT2TTargetSpace);
        if (reader.has("global_step")) trained = reader.read_scalar_int("global_step");
      } else {
        trained = load_checkpoint(path, *model_, nullptr, false).step;
      }
    } catch (const Error& e) {
      throw OptionError("warm_start_from", "{warm_start_from}=" + from + ": " + option_message(e));
    }
    spdlog::info("warm start: the weights of {} (trained {} steps); this run starts at step 0 "
                 "with a fresh optimizer",
                 path, trained);
  }

  // Dropout on a GPU draws from its CUDA generator: each worker takes up its
  // own saved stream, as it does the CPU's. A checkpoint written on the CPU
  // or by another number of workers leaves it as seeded at start-up
  // (WorkerGroup::synchronize() reseeds every generator when the CPU states do
  // not fit either).
  void restore_cuda_random_state(const std::vector<std::string>& states) {
    if (!device_.is_cuda() || states.empty()) return;
    if (static_cast<int>(states.size()) != worker_.world_size) {
      spdlog::warn("{} holds the CUDA random states of {} worker(s), this run has {}: dropout "
                   "on the GPU will not repeat an uninterrupted run exactly",
                   latest_, states.size(), worker_.world_size);
      return;
    }
    set_cuda_rng_state(cuda_index(device_), states[static_cast<size_t>(worker_.rank)]);
  }

  const TrainOptions& options_;
  const HParams& hp_;
  const WorkerEnv worker_;
  const bool chief_;
  const c10::Device device_;
  T2TModel* const model_;
  torch::optim::Optimizer* const optimizer_;
  std::string latest_;  // the checkpoint resumed from; empty: a fresh run
  int64_t step_ = 0;
  std::optional<ReaderState> reader_state_;
  std::vector<std::string> saved_random_states_;
  double saved_loss_scale_ = 0;  // 0: the checkpoint had none
  int64_t saved_loss_scale_good_steps_ = 0;
};

}  // namespace

ResumePoint resume_run(const TrainOptions& options, const HParams& hp, const WorkerEnv& worker,
                       const c10::Device& device, T2TModel& model,
                       torch::optim::Optimizer& optimizer) {
  return Resume(options, hp, worker, device, model, optimizer).run();
}

}  // namespace t2t
