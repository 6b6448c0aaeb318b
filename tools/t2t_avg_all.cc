// t2t-avg-all: averages the last checkpoints of a training run into a new
// checkpoint directory, T2T's flags: the newest --n (of at least
// --min_steps steps) or an explicit list, once; with --wait_minutes, again
// each time training writes a new checkpoint, as T2T's does, until none
// has come for that long.
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "t2t/checkpoint/average.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/data/problem.h"
#include "t2t/translate/int8_checkpoint.h"
#include "t2t/translate/run_hparams.h"
#include "t2t/translate/translator.h"
#include "t2t/io/tf_checkpoint.h"
#include "tools/cli_common.h"

namespace {

namespace fs = std::filesystem;

void add_avg_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Averaging")
      ("model_dir", "The training run's --output_dir: its checkpoints and hparams.yaml; or "
       "the output directory of a Tensor2Tensor run (its model.ckpt-N, averaged into a "
       "TensorFlow checkpoint that T2T reads too).",
       value<std::string>()->default_value(""))
      ("output_dir", "Where the averaged checkpoint and hparams.yaml go; must not be "
       "--model_dir (the average would replace its latest checkpoint). Default <model_dir>/avg.",
       value<std::string>()->default_value(""))
      ("n", "How many of the newest checkpoints to average.",
       value<int>()->default_value("8"))
      ("checkpoints", "Comma-separated checkpoint files to average instead of the newest --n "
       "(relative names are taken in --model_dir when given).",
       value<std::string>()->default_value(""))
      ("min_steps", "Leave out checkpoints of fewer steps.",
       value<int64_t>()->default_value("0"))
      ("wait_minutes", "After averaging, wait for training to write a new checkpoint in "
       "--model_dir and average the newest --n again, each time one comes; stop once none has "
       "come for this many minutes (fractions allowed: 0.5 = 30 s). Every average stays in "
       "--output_dir under its step. 0: average once and stop.",
       value<double>()->default_value("0"))
      ("quantize", "none, or int8: write the average with its matrices in int8 instead, a "
       "checkpoint that t2t-decoder, t2t-serve and t2t-translate-all decode on the CPU as "
       "--quantize=int8 does, without quantizing at start (smaller, faster to load). It can be "
       "decoded, not trained on nor averaged. Needs --problem and --data_dir (the "
       "vocabularies give the model's shape).",
       value<std::string>()->default_value("none"))
      ("problem", "With --quantize=int8: the problem the run was trained on.",
       value<std::string>()->default_value(""))
      ("data_dir", "With --quantize=int8: the problem's data directory (its vocabularies).",
       value<std::string>()->default_value(""))
      ("model", "With --quantize=int8: the run's model.",
       value<std::string>()->default_value("transformer"));
}

// --quantize=int8: what building the model takes.
struct Int8Export {
  bool on = false;
  std::string problem, data_dir, model;
};

// Rewrites the float average at `path` (in output_dir, beside its
// hparams.yaml) as an int8 checkpoint under the same name.
void write_int8(const std::string& path, const std::string& output_dir, const Int8Export& spec) {
  const t2t::Stopwatch clock;
  t2t::TranslatorOptions options;
  options.problem = spec.problem;
  options.model = spec.model;
  options.hparams = t2t::decoding_hparams(output_dir, t2t::HParamsRequest{});
  options.data_dir = spec.data_dir;
  options.output_dir = output_dir;
  options.checkpoint = path;
  t2t::CheckpointMeta meta;
  t2t::read_checkpoint_tensors(path, &meta);
  const auto float_bytes = fs::file_size(path);
  // Loaded as every decoder loads it; its float weights are what is
  // quantized and saved.
  const t2t::Translator translator(std::move(options));
  t2t::save_int8_checkpoint(*translator.current()->model, output_dir, meta);
  spdlog::info("wrote {} in int8 ({:.1f} MiB, the float average {:.1f} MiB) in {:.1f} s", path,
               fs::file_size(path) / 1048576.0, float_bytes / 1048576.0, clock.seconds());
}

// The checkpoints of `model_dir` of at least `min_steps` steps as (step,
// path), oldest first: t2t's (model.ckpt-N.pt), or in a directory that only
// Tensor2Tensor trained in, T2T's (model.ckpt-N prefixes). None for a
// directory that does not exist (yet).
struct Eligible {
  std::vector<std::pair<int64_t, std::string>> checkpoints;
  bool tensorflow = false;
};

Eligible eligible(const std::string& model_dir, int64_t min_steps) {
  Eligible out;
  for (const auto& path : t2t::list_checkpoints(model_dir))
    if (t2t::checkpoint_step(path) >= min_steps)
      out.checkpoints.emplace_back(t2t::checkpoint_step(path), path);
  if (!out.checkpoints.empty() || !t2t::list_checkpoints(model_dir).empty()) return out;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return out;
  for (const auto& [step, prefix] : t2t::list_tf_checkpoints(model_dir))
    if (step >= min_steps) out.checkpoints.emplace_back(step, prefix);
  out.tensorflow = true;
  return out;
}

// Averages t2t's checkpoints, or T2T's (TensorFlow prefixes) into a
// TensorFlow checkpoint again.
t2t::AverageResult average_any(const std::vector<std::string>& window, bool tensorflow,
                               const std::string& output_dir, const std::string& run_dir) {
  if (tensorflow) return t2t::average_tf_checkpoints(window, output_dir);
  return t2t::average_checkpoints(window, output_dir, (fs::path(run_dir) / "hparams.yaml").string());
}

// The averaging rounds of a --model_dir: the newest --n checkpoints, and
// with --wait_minutes again for each new one.
struct Follow {
  std::string model_dir;
  std::string output_dir;
  int n = 8;
  int64_t min_steps = 0;
  double wait_minutes = 0;

  Int8Export int8;  // each average also written in int8 when on

  // Averages the newest n of `all`; false when one of them was deleted
  // meanwhile (the trainer's --keep_checkpoint_max): list again.
  bool average(const Eligible& all, t2t::AverageResult* result) const {
    const size_t take = std::min(all.checkpoints.size(), static_cast<size_t>(n));
    std::vector<std::string> window;
    for (size_t i = all.checkpoints.size() - take; i < all.checkpoints.size(); ++i)
      window.push_back(all.checkpoints[i].second);
    if (take < static_cast<size_t>(n)) {
      const std::string text = fmt::format(
          "{} checkpoint(s){} in {}, fewer than --n={}; averaging those", take,
          min_steps > 0 ? fmt::format(" of at least --min_steps={} steps", min_steps) : "",
          model_dir, n);
      if (wait_minutes > 0) spdlog::info("{}", text);
      else spdlog::warn("{}", text);
    }
    try {
      *result = average_any(window, all.tensorflow, output_dir, model_dir);
      if (int8.on) write_int8(result->path, output_dir, int8);
      return true;
    } catch (const t2t::Error&) {
      for (const auto& path : window)
        if (!fs::exists(all.tensorflow ? path + ".index" : path)) {
          spdlog::info("{} was deleted while being averaged; looking again", path);
          return false;
        }
      throw;
    }
  }

  // Returns how many averages were written.
  int run() const {
    int written = 0;
    int64_t done_step = -1;  // the newest step averaged so far
    const double limit = wait_minutes * 60;
    // Often enough to follow training closely, rarely enough to cost nothing.
    const double poll = std::clamp(limit / 20, 0.1, 10.0);
    t2t::Stopwatch since_new;
    for (;;) {
      const Eligible all = eligible(model_dir, min_steps);
      if (!all.checkpoints.empty() && all.checkpoints.back().first > done_step) {
        t2t::AverageResult result;
        if (!average(all, &result)) continue;
        ++written;
        done_step = all.checkpoints.back().first;
        since_new.restart();
        const size_t take = result.inputs.size();
        std::cout << "averaged " << take << " checkpoint(s) into " << result.path << " (steps "
                  << all.checkpoints[all.checkpoints.size() - take].first << " to "
                  << result.step << ")" << std::endl;
        if (wait_minutes > 0)
          spdlog::info("waiting up to {:.0f} s for a new checkpoint in {}", limit, model_dir);
        continue;
      }
      if (wait_minutes <= 0 || since_new.seconds() >= limit) break;
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::min(poll, limit - since_new.seconds())));
    }
    if (wait_minutes > 0)
      spdlog::info("no new checkpoint in {} for {} minute(s); stopping", model_dir, wait_minutes);
    return written;
  }
};

int average(const cxxopts::ParseResult& flags) {
  using t2t::cli::UsageError;
  const std::string model_dir = flags["model_dir"].as<std::string>();
  const std::string list = flags["checkpoints"].as<std::string>();
  const int n = flags["n"].as<int>();
  if (model_dir.empty() && list.empty())
    throw UsageError("--model_dir is required, e.g. --model_dir=t2t_train/run1 "
                     "(or name the files with --checkpoints=a.pt,b.pt)");
  if (n < 1) throw UsageError("--n=" + std::to_string(n) + " must be at least 1");
  if (!list.empty() && flags.count("n"))
    throw UsageError("--n and --checkpoints both choose the checkpoints; give one of them");
  for (const char* name : {"min_steps", "wait_minutes"})
    if (!list.empty() && flags.count(name))
      throw UsageError(std::string("--") + name + " chooses among --model_dir's checkpoints; "
                       "it does not apply to a --checkpoints list");
  const int64_t min_steps = flags["min_steps"].as<int64_t>();
  if (min_steps < 0) throw UsageError("--min_steps must be >= 0");
  const double wait_minutes = flags["wait_minutes"].as<double>();
  if (!(wait_minutes >= 0)) throw UsageError("--wait_minutes must be >= 0");

  std::vector<std::string> checkpoints;
  if (list.empty()) {
    if (wait_minutes == 0 && !fs::is_directory(model_dir))
      throw t2t::Error("--model_dir=" + model_dir + " is not a directory of checkpoints");
  } else {
    for (std::string name : t2t::split(list, ',')) {
      name = t2t::trim(name);
      if (name.empty()) continue;
      fs::path p(name);
      if (p.is_relative() && !model_dir.empty() && !fs::exists(p) && !t2t::is_tf_checkpoint(name))
        p = fs::path(model_dir) / p;
      checkpoints.push_back(p.string());
    }
    if (checkpoints.empty()) throw UsageError("--checkpoints='" + list + "' names no file");
  }

  std::string output_dir = flags["output_dir"].as<std::string>();
  if (output_dir.empty()) {
    if (model_dir.empty())
      throw UsageError("--output_dir is required with --checkpoints and no --model_dir");
    output_dir = (fs::path(model_dir) / "avg").string();
  }
  Int8Export int8;
  const std::string quantize = flags["quantize"].as<std::string>();
  if (quantize != "none" && quantize != "int8")
    throw UsageError("--quantize=" + quantize + " is not one of none, int8");
  int8.on = quantize == "int8";
  int8.problem = flags["problem"].as<std::string>();
  int8.data_dir = flags["data_dir"].as<std::string>();
  int8.model = flags["model"].as<std::string>();
  if (int8.on && (int8.problem.empty() || int8.data_dir.empty()))
    throw UsageError("--quantize=int8 builds the model, whose shape the vocabularies give: add "
                     "--problem=P --data_dir=D, as for t2t-decoder");
  if (!int8.on)
    for (const char* name : {"problem", "data_dir", "model"})
      if (flags.count(name))
        throw UsageError(std::string("--") + name + " is for --quantize=int8 only");
  if (int8.on) t2t::create_problem(int8.problem);  // an unknown name fails before averaging

  if (list.empty()) {
    if (int8.on && eligible(model_dir, min_steps).tensorflow)
      throw UsageError("--quantize=int8 writes t2t's int8 checkpoints; " + model_dir + " holds "
                       "T2T's TensorFlow checkpoints, whose average stays a TensorFlow "
                       "checkpoint: average without it, then decode with --quantize=int8");
    Follow follow{model_dir, output_dir, n, min_steps, wait_minutes};
    follow.int8 = int8;
    if (follow.run() == 0)
      throw t2t::Error("--model_dir=" + model_dir + " holds no checkpoint (model.ckpt-N.pt, or "
                       "T2T's model.ckpt-N.index)" +
                       (min_steps > 0 ? " of at least --min_steps=" + std::to_string(min_steps) +
                                            " steps"
                                      : std::string()) +
                       (wait_minutes > 0 ? ", and none came within --wait_minutes" : "") +
                       "; train there first");
    std::cout << "decode the latest with: t2t-decoder --output_dir=" << output_dir << " ...\n";
    return 0;
  }
  // T2T's checkpoints are named by their prefix (model.ckpt-N); a list
  // averages one kind.
  const size_t tensorflow = static_cast<size_t>(
      std::count_if(checkpoints.begin(), checkpoints.end(), t2t::is_tf_checkpoint));
  if (tensorflow != 0 && tensorflow != checkpoints.size())
    throw UsageError("--checkpoints mixes T2T's TensorFlow checkpoints (model.ckpt-N) with "
                     "t2t's (model.ckpt-N.pt); average one kind at a time");
  // The run's hparams.yaml: the decoder reads it from the directory it loads.
  const fs::path run_dir = model_dir.empty() ? fs::path(checkpoints.back()).parent_path()
                                             : fs::path(model_dir);
  if (int8.on && tensorflow != 0)
    throw UsageError("--quantize=int8 writes t2t's int8 checkpoints, not T2T's TensorFlow ones: "
                     "average without it, then decode with --quantize=int8");
  const auto result = average_any(checkpoints, tensorflow != 0, output_dir, run_dir.string());
  if (int8.on) write_int8(result.path, output_dir, int8);
  std::cout << "averaged " << result.inputs.size() << " checkpoint(s) into " << result.path
            << " (step " << result.step << ")\n"
            << "decode it with: t2t-decoder --output_dir=" << output_dir << " ...\n";
  return 0;
}

// cxxopts takes one-letter flags only as "-n 8", and T2T's is spelled
// "--n=8": rewrite it before parsing.
std::vector<std::string> spell_n_flag(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--n") {
      args[i] = "-n";
    } else if (args[i].rfind("--n=", 0) == 0) {
      const std::string value = args[i].substr(4);
      args[i] = "-n";
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, value);
      ++i;
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = spell_n_flag(argc, argv);
  std::vector<char*> args_ptrs;
  for (auto& a : args) args_ptrs.push_back(a.data());
  args_ptrs.push_back(nullptr);
  cxxopts::Options options(
      "t2t-avg-all",
      "Averages the newest checkpoints of a training run into a new checkpoint:\n"
      "  t2t-avg-all --model_dir=t2t_train/run1 --output_dir=t2t_train/run1/avg --n=8\n"
      "  t2t-avg-all --model_dir=t2t_train/run1 --checkpoints=model.ckpt-9000.pt,model.ckpt-10000.pt\n"
      "  t2t-avg-all --model_dir=t2t_train/run1 --wait_minutes=30   # as training goes on\n"
      "  t2t-avg-all --model_dir=$T2T_TRAIN --output_dir=$T2T_TRAIN/avg   # a T2T run\n"
      "  t2t-avg-all --model_dir=t2t_train/run1 --output_dir=t2t_train/run1/int8 --quantize=int8 \\\n"
      "    --problem=translate_enzh_wmt32k --data_dir=t2t_data   # saved in int8 for the CPU\n"
      "then: t2t-decoder --output_dir=t2t_train/run1/avg ...\n");
  t2t::cli::add_common_flags(options);
  add_avg_flags(options);
  return t2t::cli::run(static_cast<int>(args.size()), args_ptrs.data(), options, average);
}
