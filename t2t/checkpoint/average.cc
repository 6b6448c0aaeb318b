#include "t2t/checkpoint/average.h"

#include <torch/torch.h>

#include <filesystem>
#include <set>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

std::string same_dir_key(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : p.string();
}

// What makes `tensors` (from `path`) unfit to average with `first` (from
// `first_path`): missing and extra names, other shapes or types.
void check_same_layout(const TensorMap& first, const std::string& first_path,
                       const TensorMap& tensors, const std::string& path) {
  std::vector<std::string> problems;
  for (const auto& [name, t] : first) {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
      problems.push_back("no " + name);
    } else if (it->second.sizes() != t.sizes()) {
      problems.push_back(name + " has shape " + c10::str(it->second.sizes()) + " instead of " +
                         c10::str(t.sizes()));
    } else if (it->second.scalar_type() != t.scalar_type()) {
      problems.push_back(name + " is " + c10::toString(it->second.scalar_type()) + " instead of " +
                         c10::toString(t.scalar_type()));
    }
  }
  for (const auto& [name, t] : tensors)
    if (!first.count(name)) problems.push_back("an extra " + name);
  if (problems.empty()) return;
  const size_t total = problems.size();
  if (total > 8) {
    problems.resize(6);
    problems.push_back("... " + std::to_string(total - 6) + " more");
  }
  throw Error("cannot average '" + path + "' with '" + first_path +
              "': they are not the same model (" + join(problems, "; ") + ")");
}

void check_same_hparams(const CheckpointMeta& first, const std::string& first_path,
                        const CheckpointMeta& meta, const std::string& path) {
  if (meta.hparams_yaml == first.hparams_yaml) return;
  std::string what = "other hparams";
  try {
    auto diff = HParams::from_yaml_string(first.hparams_yaml, first_path)
                    .diff(HParams::from_yaml_string(meta.hparams_yaml, path));
    if (!diff.empty()) what += " (" + join(diff, "; ") + ")";
  } catch (const std::exception&) {
    // Unparsable hparams still differ; the plain message says enough.
  }
  throw Error("cannot average '" + path + "' with '" + first_path + "': it was trained with " +
              what + ". Average checkpoints of one run only.");
}

}  // namespace

std::vector<std::string> last_checkpoints(const std::string& model_dir, int n) {
  if (n < 1) throw Error("the number of checkpoints to average must be at least 1, not " +
                         std::to_string(n));
  if (!fs::is_directory(model_dir))
    throw Error("'" + model_dir + "' is not a directory of checkpoints");
  std::vector<std::string> all = list_checkpoints(model_dir);
  if (all.empty())
    throw Error("'" + model_dir + "' holds no checkpoint (model.ckpt-N.pt); train there first");
  if (static_cast<int>(all.size()) < n) {
    spdlog::warn("'{}' holds {} checkpoint(s), fewer than the {} asked for; averaging those",
                 model_dir, all.size(), n);
    return all;
  }
  return std::vector<std::string>(all.end() - n, all.end());
}

AverageResult average_checkpoints(const std::vector<std::string>& checkpoints,
                                  const std::string& output_dir,
                                  const std::string& hparams_yaml_path) {
  if (checkpoints.empty()) throw Error("no checkpoints to average");
  const std::string out_key = same_dir_key(output_dir);
  std::set<std::string> seen;
  for (const auto& path : checkpoints) {
    if (!seen.insert(same_dir_key(path)).second)
      throw Error("checkpoint '" + path + "' is listed twice; each one counts once in the mean");
    if (same_dir_key(fs::path(path).parent_path().string()) == out_key)
      throw Error("the output directory '" + output_dir + "' holds the checkpoint '" + path +
                  "' being averaged; the result would replace a checkpoint of the run. Write "
                  "it to another directory (T2T uses <model_dir>/avg).");
  }

  torch::NoGradGuard no_grad;
  TensorMap sums, first;
  TensorMap latest_others;  // non-floating tensors of the latest input
  CheckpointMeta first_meta;
  std::string first_path;
  int64_t latest_step = -1;
  AverageResult result;
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    const std::string& path = checkpoints[i];
    CheckpointMeta meta;
    TensorMap tensors = read_checkpoint_tensors(path, &meta);
    if (meta.weights == "int8")
      throw OptionError("quantize", "checkpoint '" + path + "' holds int8 weights for decoding; "
                                    "average the float checkpoints it was made from, then "
                                    "quantize the average ({quantize}=int8)");
    spdlog::info("averaging [{}/{}] {} (step {})", i + 1, checkpoints.size(), path, meta.step);
    if (i == 0) {
      first = tensors;
      first_meta = meta;
      first_path = path;
    } else {
      check_same_layout(first, first_path, tensors, path);
      check_same_hparams(first_meta, first_path, meta, path);
    }
    for (auto& [name, t] : tensors) {
      if (!t.is_floating_point()) continue;
      // float64 sums keep the mean of many float32 (or bf16) values exact
      // to the last bit of the original type.
      auto it = sums.find(name);
      if (it == sums.end()) sums.emplace(name, t.to(torch::kFloat64));
      else it->second.add_(t.to(torch::kFloat64));
    }
    if (meta.step > latest_step) {
      latest_step = meta.step;
      latest_others.clear();
      for (auto& [name, t] : tensors)
        if (!t.is_floating_point()) latest_others.emplace(name, t);
    }
    result.inputs.push_back(path);
  }

  TensorMap averaged;
  const double count = static_cast<double>(checkpoints.size());
  for (const auto& [name, t] : first) {
    if (t.is_floating_point()) averaged.emplace(name, (sums.at(name) / count).to(t.scalar_type()));
    else averaged.emplace(name, latest_others.at(name));
  }
  CheckpointMeta out_meta;
  out_meta.step = latest_step;
  out_meta.hparams_yaml = first_meta.hparams_yaml;
  result.step = latest_step;
  result.path = save_checkpoint_tensors(output_dir, averaged, out_meta);

  const std::string hparams_out = (fs::path(output_dir) / "hparams.yaml").string();
  if (!hparams_yaml_path.empty() && fs::exists(hparams_yaml_path)) {
    write_file_atomic(hparams_out, read_file(hparams_yaml_path));
  } else if (!first_meta.hparams_yaml.empty()) {
    write_file_atomic(hparams_out, first_meta.hparams_yaml);
  } else {
    spdlog::warn("the checkpoints carry no hparams and none were found at '{}'; give {} for {}",
                 hparams_yaml_path, command_suggestion("t2t-decoder", {{"hparams_set", ""}}),
                 output_dir);
  }
  return result;
}

}  // namespace t2t
