#include "t2t/translate/translate_all.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/translate/translator.h"
#include "t2t/io/tf_checkpoint.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// A checkpoint and its step: t2t's model.ckpt-N.pt, or the prefix of the
// model.ckpt-N a Tensor2Tensor run wrote.
struct StepCheckpoint {
  int64_t step;
  std::string path;
};

// The checkpoints of `dir` still to look at, oldest first: t2t's, else
// (a T2T output directory) TensorFlow's.
std::vector<StepCheckpoint> pending(const TranslateAllOptions& spec, const std::set<int64_t>& seen) {
  std::vector<StepCheckpoint> all;
  const std::string& model_dir = spec.translator.output_dir;
  for (const auto& path : list_checkpoints(model_dir))
    all.push_back({checkpoint_step(path), path});
  if (all.empty())
    for (const auto& [step, prefix] : list_tf_checkpoints(model_dir))
      all.push_back({step, prefix});
  std::vector<StepCheckpoint> out;
  for (const auto& c : all)
    if (c.step >= spec.min_steps && !seen.count(c.step)) out.push_back(c);
  return out;
}

// Whether the checkpoint is still there (the trainer may delete old ones).
bool still_there(const std::string& checkpoint) {
  return fs::exists(checkpoint) || is_tf_checkpoint(checkpoint);
}

// Translates spec.source with one checkpoint into `output`.
void translate_with(const TranslateAllOptions& spec, const std::string& checkpoint,
                    const std::string& output) {
  TranslatorOptions options = spec.translator;
  options.checkpoint = checkpoint;
  Translator(std::move(options)).translate_file(spec.source, output);
  // T2T's --keep_timestamp: the file carries its checkpoint's time.
  std::error_code ec;
  const std::string file = fs::exists(checkpoint) ? checkpoint : checkpoint + ".index";
  const auto when = fs::last_write_time(file, ec);
  if (!ec) fs::last_write_time(output, when, ec);
}

}  // namespace

std::string translation_path(const std::string& translations_dir, const std::string& problem,
                             int64_t step) {
  return (fs::path(translations_dir) / (problem + "-" + std::to_string(step))).string();
}

TranslateAllResult translate_all(const TranslateAllOptions& spec) {
  const std::string& model_dir = spec.translator.output_dir;
  if (!fs::is_directory(model_dir))
    throw OptionError("model_dir", "{model_dir}=" + model_dir + " is not a directory; give the "
                                   "run's directory, t2t-trainer's {output_dir}");
  if (!fs::exists(spec.source))
    throw OptionError("source", "{source}=" + spec.source + " does not exist");
  std::error_code ec;
  fs::create_directories(spec.translations_dir, ec);
  if (ec)
    throw OptionError("translations_dir", "cannot create {translations_dir}=" +
                                              spec.translations_dir + ": " + ec.message());

  TranslateAllResult result;
  std::set<int64_t> seen;
  Stopwatch since_new;  // since the last new checkpoint, for wait_minutes
  while (true) {
    const auto todo = pending(spec, seen);
    for (size_t i = 0; i < todo.size(); ++i) {
      const std::string& checkpoint = todo[i].path;
      const int64_t step = todo[i].step;
      seen.insert(step);
      const std::string output = translation_path(spec.translations_dir, spec.translator.problem, step);
      const std::string count = "[" + std::to_string(i + 1) + "/" + std::to_string(todo.size()) + "]";
      if (fs::exists(output)) {
        spdlog::info("{} step {}: {} already exists, skipping it", count, step, output);
        ++result.skipped;
        continue;
      }
      spdlog::info("{} step {}: translating {} with {}", count, step, spec.source, checkpoint);
      const Stopwatch clock;
      try {
        translate_with(spec, checkpoint, output);
      } catch (const Error&) {
        // The trainer's --keep_checkpoint_max may delete an old checkpoint
        // while it waits its turn here: that one is passed over.
        if (still_there(checkpoint)) throw;
        spdlog::warn("{} step {}: {} was deleted before it could be read, skipping it", count,
                     step, checkpoint);
        continue;
      }
      ++result.translated;
      spdlog::info("{} step {}: wrote {} in {:.1f} s", count, step, output, clock.seconds());
    }
    if (!todo.empty()) since_new.restart();
    if (spec.wait_minutes <= 0) break;
    // T2T's --wait_minutes: up to that long after the last checkpoints came
    // and were translated.
    const double limit = spec.wait_minutes * 60;
    spdlog::info("waiting up to {:.0f} s for a new checkpoint in {}",
                 std::max(0.0, limit - since_new.seconds()), model_dir);
    bool found = false;
    while (!found && since_new.seconds() < limit) {
      found = !pending(spec, seen).empty();
      if (!found)
        std::this_thread::sleep_for(std::chrono::duration<double>(
            std::max(0.0, std::min(spec.poll_seconds, limit - since_new.seconds()))));
    }
    if (!found) found = !pending(spec, seen).empty();
    if (!found) {
      spdlog::info("no new checkpoint in {} for {} minutes; stopping", model_dir,
                   spec.wait_minutes);
      break;
    }
  }
  if (result.translated + result.skipped == 0)
    throw OptionError("model_dir", "{model_dir}=" + model_dir + " holds no checkpoint "
                                   "(model.ckpt-N.pt, or T2T's model.ckpt-N.index)" +
                                       (spec.min_steps > 0 ? " of at least {min_steps}=" +
                                                                 std::to_string(spec.min_steps) +
                                                                 " steps"
                                                           : std::string()) +
                                       "; train there first with t2t-trainer");
  return result;
}

}  // namespace t2t
