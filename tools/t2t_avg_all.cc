// t2t-avg-all: averages the last checkpoints of a training run into a new
// checkpoint directory, T2T's flags. Unlike T2T's (which waits for and
// averages every window of --n checkpoints as training goes on), this
// averages once, the newest --n or an explicit list.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "t2t/checkpoint/average.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "tools/cli_common.h"

namespace {

namespace fs = std::filesystem;

void add_avg_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Averaging")
      ("model_dir", "The training run's --output_dir: its checkpoints and hparams.yaml.",
       value<std::string>()->default_value(""))
      ("output_dir", "Where the averaged checkpoint and hparams.yaml go; must not be "
       "--model_dir (the average would replace its latest checkpoint). Default <model_dir>/avg.",
       value<std::string>()->default_value(""))
      ("n", "How many of the newest checkpoints to average.",
       value<int>()->default_value("8"))
      ("checkpoints", "Comma-separated checkpoint files to average instead of the newest --n "
       "(relative names are taken in --model_dir when given).",
       value<std::string>()->default_value(""));
}

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

  std::vector<std::string> checkpoints;
  if (list.empty()) {
    checkpoints = t2t::last_checkpoints(model_dir, n);
  } else {
    for (std::string name : t2t::split(list, ',')) {
      name = t2t::trim(name);
      if (name.empty()) continue;
      fs::path p(name);
      if (p.is_relative() && !model_dir.empty() && !fs::exists(p)) p = fs::path(model_dir) / p;
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
  // The run's hparams.yaml: the decoder reads it from the directory it loads.
  fs::path run_dir = model_dir.empty() ? fs::path(checkpoints.back()).parent_path()
                                       : fs::path(model_dir);
  const auto result = t2t::average_checkpoints(checkpoints, output_dir,
                                               (run_dir / "hparams.yaml").string());
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
      "then: t2t-decoder --output_dir=t2t_train/run1/avg ...\n");
  t2t::cli::add_common_flags(options);
  add_avg_flags(options);
  return t2t::cli::run(static_cast<int>(args.size()), args_ptrs.data(), options, average);
}
