#include "t2t/serve/model_holder.h"

#include <filesystem>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"

namespace t2t {

namespace fs = std::filesystem;

std::shared_ptr<const ServingModel> ModelHolder::load(const std::string& checkpoint_path) const {
  const Stopwatch clock;
  auto serving = std::make_shared<ServingModel>();
  serving->loaded = load_for_decoding(*spec_.problem, spec_.model_name, spec_.hparams,
                                      spec_.data_dir, spec_.output_dir, checkpoint_path,
                                      spec_.device);
  prepare_for_decoding(*serving->loaded.model, spec_.quantize, spec_.cuda_graphs);
  serving->decoder = std::make_unique<Decoder>(serving->loaded.model,
                                               serving->loaded.encoders.inputs,
                                               serving->loaded.encoders.targets, spec_.options,
                                               spec_.device);
  spdlog::info("loaded {} (step {}) in {:.1f} s", serving->loaded.checkpoint,
               serving->loaded.step, clock.seconds());
  // Before the model serves: its first requests then take no longer than
  // the later ones.
  spdlog::info("warmed up on synthetic batches of 1 to {} sentences in {:.2f} s",
               spec_.options.batch_size, serving->decoder->warm_up());
  return serving;
}

void ModelHolder::load_initial() {
  auto serving = load(spec_.checkpoint_path);
  std::lock_guard<std::mutex> lock(current_mutex_);
  current_ = std::move(serving);
}

ReloadResult ModelHolder::reload() {
  std::lock_guard<std::mutex> reloading(reload_mutex_);
  const auto serving = current();
  if (!serving) throw Error("no model is loaded yet");
  ReloadResult result;
  result.previous_step = serving->loaded.step;
  const std::string newest = newest_beside(*serving);
  if (newest.empty())
    throw Error("no checkpoint (model.ckpt-N.pt, or T2T's model.ckpt-N) left beside " +
                serving->loaded.checkpoint +
                ", which is still serving");
  if (is_serving(*serving, newest)) {
    result.checkpoint = newest;
    result.step = serving->loaded.step;
    return result;
  }
  std::shared_ptr<const ServingModel> fresh;
  try {
    fresh = load(newest);
  } catch (const std::exception& e) {
    throw Error("could not load " + newest + ", still serving " + serving->loaded.checkpoint +
                " (step " + std::to_string(serving->loaded.step) + "): " + e.what());
  }
  result.reloaded = true;
  result.checkpoint = fresh->loaded.checkpoint;
  result.step = fresh->loaded.step;
  {
    std::lock_guard<std::mutex> lock(current_mutex_);
    current_ = std::move(fresh);
  }
  return result;
}

std::string ModelHolder::newest_beside(const ServingModel& serving) {
  std::string dir = fs::path(serving.loaded.checkpoint).parent_path().string();
  if (dir.empty()) dir = ".";
  // t2t's checkpoints, else those of a T2T run (model.ckpt-N, TensorFlow's).
  const std::string newest = latest_checkpoint(dir);
  return newest.empty() ? find_tf_checkpoint(dir) : newest;
}

bool ModelHolder::is_serving(const ServingModel& serving, const std::string& checkpoint) {
  // The same file, however its path was spelled (--checkpoint_path may
  // have named it with ./ or a symbolic link).
  std::error_code ec;
  return fs::path(checkpoint) == fs::path(serving.loaded.checkpoint) ||
         fs::equivalent(checkpoint, serving.loaded.checkpoint, ec);
}

std::string ModelHolder::newer_checkpoint() const {
  const auto serving = current();
  if (!serving) return "";
  const std::string newest = newest_beside(*serving);
  return newest.empty() || is_serving(*serving, newest) ? "" : newest;
}

std::shared_ptr<const ServingModel> ModelHolder::current() const {
  std::lock_guard<std::mutex> lock(current_mutex_);
  return current_;
}

}  // namespace t2t
