#include "t2t/checkpoint/checkpoint.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>

#include "t2t/checkpoint/mapped_archive.h"
#include "t2t/core/cuda_loader.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/core/cuda_rng_entry_points.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "model.ckpt-";
constexpr const char* kSuffix = ".pt";
constexpr const char* kIndexFile = "checkpoint";
// Followed by the worker's rank.
constexpr const char* kWorkerRngPrefix = "meta/worker_rng_state/";
constexpr const char* kWorkerCudaRngPrefix = "meta/worker_cuda_rng_state/";

// Tensors are stored under "model/<name>"; strings as uint8 tensors, which
// every LibTorch version reads back unchanged.
torch::Tensor string_tensor(const std::string& s) {
  return torch::from_blob(const_cast<char*>(s.data()), {static_cast<int64_t>(s.size())},
                          torch::kUInt8)
      .clone();
}

std::string tensor_string(const torch::Tensor& t) {
  auto c = t.contiguous();
  return std::string(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), c.numel());
}

}  // namespace

std::string cpu_rng_state() {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return tensor_string(gen.get_state());
}

void set_cpu_rng_state(const std::string& state) {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  try {
    gen.set_state(string_tensor(state));
  } catch (const c10::Error& e) {
    throw Error("a saved random generator state could not be restored (" +
                std::to_string(state.size()) + " bytes): " + e.what_without_backtrace());
  }
}

std::string cuda_rng_state(int device) {
  const auto get = reinterpret_cast<CudaRngState>(cuda_module_symbol(kCudaRngState));
  at::Tensor state;
  try {
    get(device, &state);
  } catch (const c10::Error& e) {
    throw Error("cannot read the random state of CUDA device " + std::to_string(device) + ": " +
                e.what_without_backtrace());
  }
  return tensor_string(state);
}

void set_cuda_rng_state(int device, const std::string& state) {
  const auto set = reinterpret_cast<SetCudaRngState>(cuda_module_symbol(kSetCudaRngState));
  try {
    set(device, string_tensor(state));
  } catch (const c10::Error& e) {
    throw Error("a saved CUDA random generator state could not be restored on device " +
                std::to_string(device) + " (" + std::to_string(state.size()) +
                " bytes): " + e.what_without_backtrace());
  }
}

int64_t checkpoint_step(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (!starts_with(name, kPrefix) || !ends_with(name, kSuffix)) return -1;
  const std::string digits = name.substr(std::strlen(kPrefix),
                                         name.size() - std::strlen(kPrefix) - std::strlen(kSuffix));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    int64_t step = checkpoint_step(e.path().string());
    if (step >= 0 && e.is_regular_file()) found.emplace_back(step, e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

std::string latest_checkpoint(const std::string& dir) {
  const fs::path index = fs::path(dir) / kIndexFile;
  if (fs::exists(index)) {
    std::string name = trim(read_file(index.string()));
    fs::path p = fs::path(dir) / name;
    if (!name.empty() && fs::exists(p)) return p.string();
  }
  auto all = list_checkpoints(dir);
  return all.empty() ? "" : all.back();
}

namespace {

void create_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create the checkpoint directory '" + dir + "': " + ec.message());
}

void write_meta(torch::serialize::OutputArchive& archive, const CheckpointMeta& meta) {
  archive.write("meta/step", torch::tensor(meta.step, torch::kInt64));
  archive.write("meta/reader_state", string_tensor(meta.reader_state));
  archive.write("meta/hparams_yaml", string_tensor(meta.hparams_yaml));
  for (size_t rank = 0; rank < meta.worker_rng_states.size(); ++rank)
    archive.write(kWorkerRngPrefix + std::to_string(rank),
                  string_tensor(meta.worker_rng_states[rank]));
  for (size_t rank = 0; rank < meta.worker_cuda_rng_states.size(); ++rank)
    archive.write(kWorkerCudaRngPrefix + std::to_string(rank),
                  string_tensor(meta.worker_cuda_rng_states[rank]));
  if (!meta.weights.empty()) archive.write("meta/weights", string_tensor(meta.weights));
  if (meta.loss_scale > 0) {
    archive.write("meta/loss_scale", torch::tensor(meta.loss_scale, torch::kFloat64));
    archive.write("meta/loss_scale_good_steps",
                  torch::tensor(meta.loss_scale_good_steps, torch::kInt64));
  }
}

// Saves under the step's name through a temporary file, then points the
// index at it, so readers never see a partial checkpoint.
std::string commit_archive(torch::serialize::OutputArchive& archive, const std::string& dir,
                           int64_t step) {
  std::error_code ec;
  const std::string name = kPrefix + std::to_string(step) + kSuffix;
  const std::string path = (fs::path(dir) / name).string();
  const std::string tmp = temp_path_for(path);
  try {
    archive.save_to(tmp);
  } catch (const c10::Error& e) {
    fs::remove(tmp, ec);
    throw Error("cannot write checkpoint '" + path + "' (disk full?): " + e.what_without_backtrace());
  }
  fs::rename(tmp, path, ec);
  if (ec) throw Error("cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
  write_file_atomic((fs::path(dir) / kIndexFile).string(), name + "\n");
  return path;
}

// Everything but the random state, which only load_checkpoint restores.
// read(key, &tensor) looks an entry up, false when the file lacks it.
using ReadEntry = std::function<bool(const std::string&, torch::Tensor*)>;
CheckpointMeta read_meta(const ReadEntry& read, const std::string& path) {
  CheckpointMeta meta;
  torch::Tensor step, reader_state, hparams_yaml;
  meta.step = read("meta/step", &step) ? step.item<int64_t>()
                                        : std::max<int64_t>(0, checkpoint_step(path));
  if (read("meta/reader_state", &reader_state)) meta.reader_state = tensor_string(reader_state);
  if (read("meta/hparams_yaml", &hparams_yaml)) meta.hparams_yaml = tensor_string(hparams_yaml);
  torch::Tensor weights;
  if (read("meta/weights", &weights)) meta.weights = tensor_string(weights);
  for (;;) {
    torch::Tensor state;
    const std::string key = kWorkerRngPrefix + std::to_string(meta.worker_rng_states.size());
    if (!read(key, &state)) break;
    meta.worker_rng_states.push_back(tensor_string(state));
  }
  for (;;) {
    torch::Tensor state;
    const std::string key =
        kWorkerCudaRngPrefix + std::to_string(meta.worker_cuda_rng_states.size());
    if (!read(key, &state)) break;
    meta.worker_cuda_rng_states.push_back(tensor_string(state));
  }
  torch::Tensor scale, good_steps;
  if (read("meta/loss_scale", &scale)) {
    meta.loss_scale = scale.item<double>();
    if (read("meta/loss_scale_good_steps", &good_steps))
      meta.loss_scale_good_steps = good_steps.item<int64_t>();
  }
  return meta;
}

// Looks a key up in a file's tensors.
ReadEntry entry_reader(const TensorMap& entries) {
  return [&entries](const std::string& key, torch::Tensor* out) {
    const auto it = entries.find(key);
    if (it == entries.end()) return false;
    *out = it->second;
    return true;
  };
}

}  // namespace

std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer* optimizer, const CheckpointMeta& meta,
                            int keep_max) {
  create_dir(dir);
  torch::serialize::OutputArchive archive;
  torch::NoGradGuard no_grad;
  for (const auto& p : model.named_parameters()) archive.write("model/" + p.key(), p.value());
  for (const auto& b : model.named_buffers()) archive.write("model/" + b.key(), b.value(), true);
  if (optimizer) {
    torch::serialize::OutputArchive opt;
    optimizer->save(opt);
    archive.write("optimizer", opt);
  }
  write_meta(archive, meta);
  archive.write("meta/rng_state", string_tensor(cpu_rng_state()));
  const std::string path = commit_archive(archive, dir, meta.step);

  if (keep_max > 0) {
    std::error_code ec;
    auto all = list_checkpoints(dir);
    for (size_t i = 0; i + keep_max < all.size(); ++i) fs::remove(all[i], ec);
  }
  return path;
}

std::string save_checkpoint_tensors(const std::string& dir, const TensorMap& tensors,
                                    const CheckpointMeta& meta) {
  create_dir(dir);
  torch::serialize::OutputArchive archive;
  torch::NoGradGuard no_grad;
  // The file does not say which tensors were buffers; integer ones cannot be
  // parameters, and the loader treats both kinds alike.
  for (const auto& [name, t] : tensors)
    archive.write("model/" + name, t.detach(), !t.is_floating_point());
  // An averaged or exported model resumes no run: no random or loss-scale
  // state goes with it.
  CheckpointMeta without_random_state = meta;
  without_random_state.worker_rng_states.clear();
  without_random_state.worker_cuda_rng_states.clear();
  without_random_state.loss_scale = 0;
  write_meta(archive, without_random_state);
  return commit_archive(archive, dir, meta.step);
}

std::string copy_checkpoint(const std::string& path, const std::string& dir) {
  create_dir(dir);
  const std::string name = fs::path(path).filename().string();
  const std::string dest = (fs::path(dir) / name).string();
  const std::string tmp = temp_path_for(dest);
  std::error_code ec;
  fs::copy_file(path, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot copy checkpoint '" + path + "' into '" + dir + "' (disk full?): " +
                ec.message());
  }
  fs::rename(tmp, dest, ec);
  if (ec) throw Error("cannot rename '" + tmp + "' to '" + dest + "': " + ec.message());
  write_file_atomic((fs::path(dir) / kIndexFile).string(), name + "\n");
  for (const std::string& other : list_checkpoints(dir))
    if (fs::path(other).filename() != name) fs::remove(other, ec);
  return dest;
}

TensorMap read_checkpoint_tensors(const std::string& path, CheckpointMeta* meta) {
  const TensorMap entries = read_mapped_archive(path);
  TensorMap tensors;
  for (const auto& [key, value] : entries)
    if (starts_with(key, "model/")) tensors.emplace(key.substr(6), value);
  if (tensors.empty())
    throw Error("checkpoint '" + path + "' holds no model tensors; is it a t2t checkpoint?");
  if (meta)
    *meta = read_meta(entry_reader(entries), path);
  return tensors;
}

namespace {

// Sets every parameter and buffer of `model` through read(key, tensor),
// false when the file lacks it; `keys` are all the file's keys. Throws the
// differences, naming `path`. A parameter of no elements (released for an
// int8 layer) may be absent.
void restore_model(torch::nn::Module& model, const std::vector<std::string>& keys,
                   const std::function<bool(const std::string&, torch::Tensor&)>& read,
                   const std::string& path, bool adopt = false,
                   const std::set<std::string>& leave = {}) {
  std::vector<std::string> problems;
  std::set<std::string> expected;
  torch::NoGradGuard no_grad;
  auto restore = [&](const std::string& name, torch::Tensor& dest, bool may_be_released) {
    const std::string key = "model/" + name;
    torch::Tensor value;
    if (leave.count(name)) return;
    if (!read(key, value)) {
      if (!(may_be_released && dest.numel() == 0)) problems.push_back("missing " + name);
      return;
    }
    expected.insert(key);
    if (value.sizes() != dest.sizes()) {
      problems.push_back(name + ": shape " + c10::str(value.sizes()) + " in the file, " +
                         c10::str(dest.sizes()) + " in the model");
      return;
    }
    // Adopting the file's tensor instead of copying it frees the model's
    // own, which a model built under SkipInitialization never touched.
    if (adopt && value.scalar_type() == dest.scalar_type() && value.device() == dest.device() &&
        value.is_contiguous())
      dest.set_data(value);
    else
      dest.copy_(value);
  };
  for (auto& p : model.named_parameters()) restore(p.key(), p.value(), true);
  for (auto& b : model.named_buffers()) restore(b.key(), b.value(), false);
  for (const auto& k : keys)
    if (starts_with(k, "model/") && !expected.count(k)) problems.push_back("unexpected " + k.substr(6));
  if (!problems.empty()) {
    if (problems.size() > 12) {
      size_t more = problems.size() - 10;
      problems.resize(10);
      problems.push_back("... and " + std::to_string(more) + " more");
    }
    throw Error("checkpoint '" + path + "' does not fit the model (were the hparams changed?): " +
                join(problems, "; "));
  }
}

}  // namespace

void load_model_tensors(const TensorMap& tensors, torch::nn::Module& model,
                        const std::string& path, const std::set<std::string>& leave) {
  std::vector<std::string> keys;
  for (const auto& [name, t] : tensors) keys.push_back("model/" + name);
  restore_model(model, keys, [&](const std::string& key, torch::Tensor& out) {
    const auto it = tensors.find(key.substr(6));
    if (it == tensors.end()) return false;
    out = it->second;
    return true;
  }, path, /*adopt=*/true, leave);
}

CheckpointMeta load_checkpoint(const std::string& path, torch::nn::Module& model,
                               torch::optim::Optimizer* optimizer, bool restore_rng) {
  NestedArchives nested;
  const TensorMap entries = read_mapped_archive(path, optimizer ? &nested : nullptr);
  const ReadEntry read = entry_reader(entries);
  torch::Tensor weights;
  if (read("meta/weights", &weights) && tensor_string(weights) == "int8")
    throw Error("checkpoint '" + path + "' holds int8 weights for decoding (" +
                command_suggestion("t2t-avg-all", {{"quantize", "int8"}}) +
                "): it cannot be trained on; use the float checkpoint it was made from");
  std::vector<std::string> keys;
  for (const auto& entry : entries) keys.push_back(entry.first);
  // Copied, not adopted: a resumed run writes its parameters, and the
  // file's tensors are its mapped records.
  restore_model(model, keys, [&read](const std::string& key, torch::Tensor& out) {
    return read(key, &out);
  }, path);
  if (optimizer) {
    const auto it = nested.find("optimizer");
    try {
      if (it != nested.end()) optimizer->load(*it->second);
    } catch (const c10::Error& e) {
      throw Error("checkpoint '" + path + "': the optimizer's state does not fit this run's " +
                  "optimizer (" + e.what_without_backtrace() + ")");
    }
  }
  CheckpointMeta meta = read_meta(read, path);
  torch::Tensor rng_state;
  if (read("meta/rng_state", &rng_state)) {
    meta.has_rng_state = true;
    if (restore_rng) set_cpu_rng_state(tensor_string(rng_state));
  }
  return meta;
}

}  // namespace t2t
