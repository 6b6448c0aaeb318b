// Averaging of T2T's TensorFlow checkpoints (average.h), without LibTorch:
// one variable at a time from every input, so that memory holds one
// variable, not the model, whatever its size.
#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "t2t/checkpoint/average.h"
#include "t2t/core/error.h"
#include "t2t/core/string_util.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/io/tf_checkpoint_writer.h"

namespace t2t {

namespace {

namespace fs = std::filesystem;

bool is_floating(int dtype) {
  switch (static_cast<TFDType>(dtype)) {
    case TFDType::kFloat:
    case TFDType::kDouble:
    case TFDType::kBFloat16:
    case TFDType::kHalf: return true;
    default: return false;
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// What makes `other` unfit to average with `first`: missing and extra
// variables, other shapes or dtypes.
void check_same_variables(const TFCheckpointReader& first, const TFCheckpointReader& other) {
  std::vector<std::string> problems;
  for (const std::string& name : first.names()) {
    if (!other.has(name)) {
      problems.push_back("no " + name);
      continue;
    }
    const TFTensorEntry &a = first.entry(name), &b = other.entry(name);
    if (a.shape != b.shape)
      problems.push_back(name + " has shape " + shape_text(b.shape) + " instead of " +
                         shape_text(a.shape));
    else if (a.dtype != b.dtype)
      problems.push_back(name + " is " + tf_dtype_name(b.dtype) + " instead of " +
                         tf_dtype_name(a.dtype));
  }
  for (const std::string& name : other.names())
    if (!first.has(name)) problems.push_back("an extra " + name);
  if (problems.empty()) return;
  const size_t total = problems.size();
  if (total > 8) {
    problems.resize(6);
    problems.push_back("... " + std::to_string(total - 6) + " more");
  }
  throw Error("cannot average '" + other.prefix() + "' with '" + first.prefix() +
              "': they are not the same model (" + join(problems, "; ") + ")");
}

}  // namespace

AverageResult average_tf_checkpoints(const std::vector<std::string>& prefixes,
                                     const std::string& output_dir) {
  if (prefixes.empty()) throw Error("no checkpoint to average");
  std::vector<TFCheckpointReader> readers;
  readers.reserve(prefixes.size());
  for (const std::string& prefix : prefixes) readers.emplace_back(prefix);
  for (size_t i = 1; i < readers.size(); ++i) check_same_variables(readers[0], readers[i]);

  // The newest input gives the step (and the integer variables).
  size_t newest = 0;
  std::vector<int64_t> steps;
  for (size_t i = 0; i < readers.size(); ++i) {
    const auto& r = readers[i];
    if (!r.has("global_step"))
      throw Error("T2T checkpoint " + r.prefix() + " has no global_step: was it written by "
                  "T2T's trainer?");
    steps.push_back(r.read_scalar_int("global_step"));
    if (steps[i] > steps[newest]) newest = i;
  }
  std::error_code ec;
  const fs::path out = fs::absolute(output_dir).lexically_normal();
  for (const std::string& prefix : prefixes) {
    const fs::path in = fs::absolute(prefix).parent_path().lexically_normal();
    if (fs::equivalent(in, out, ec))
      throw OptionError("output_dir", "{output_dir}=" + output_dir + " holds the checkpoint " +
                                          prefix + " being averaged, whose name the average "
                                          "would take: give another directory");
  }

  AverageResult result;
  result.step = steps[newest];
  const std::string name = "model.ckpt-" + std::to_string(result.step);
  result.path = (out / name).string();
  std::vector<std::pair<int64_t, std::string>> by_step;
  for (size_t i = 0; i < prefixes.size(); ++i) by_step.emplace_back(steps[i], prefixes[i]);
  std::stable_sort(by_step.begin(), by_step.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [step, prefix] : by_step) result.inputs.push_back(prefix);

  TFCheckpointWriter writer(result.path);
  const double n = static_cast<double>(readers.size());
  for (const std::string& var : readers[newest].names()) {
    const TFTensorEntry& entry = readers[newest].entry(var);
    if (!is_floating(entry.dtype) || var == "global_step") {
      writer.add(var, static_cast<TFDType>(entry.dtype), entry.shape,
                 readers[newest].read_bytes(var));
      continue;
    }
    // Summed in float64, written as float32, as T2T's t2t-avg-all does.
    std::vector<double> sum;
    for (const auto& r : readers) {
      const std::vector<float> values = r.read_floats(var);
      if (sum.empty()) sum.assign(values.size(), 0.0);
      for (size_t k = 0; k < values.size(); ++k) sum[k] += values[k];
    }
    std::vector<float> mean(sum.size());
    for (size_t k = 0; k < sum.size(); ++k) mean[k] = static_cast<float>(sum[k] / n);
    writer.add_floats(var, entry.shape, mean);
  }
  writer.finish();
  write_tf_checkpoint_state(out.string(), name, {name});

  // What T2T's tools and t2t-decoder read beside the checkpoint.
  const fs::path run_dir = fs::path(readers[newest].prefix()).parent_path();
  for (const char* file : {"hparams.json", "flags.txt", "flags_t2t.txt"}) {
    if (!fs::exists(run_dir / file)) continue;
    fs::copy_file(run_dir / file, out / file, fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw Error("cannot copy " + (run_dir / file).string() + " into " + out.string() + ": " +
                  ec.message());
  }
  return result;
}

}  // namespace t2t
