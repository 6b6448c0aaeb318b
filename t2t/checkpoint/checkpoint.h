// Checkpoints: model parameters and buffers, optionally the optimizer's
// state, and what an exact resume needs, in one file `model.ckpt-<step>.pt`
// per step plus a `checkpoint` file naming the latest, as in T2T's output
// directories. Files are written to a temporary name and renamed, so a
// crash never leaves a half-written latest.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace at {
class Tensor;
}
namespace torch {
namespace nn {
class Module;
}
namespace optim {
class Optimizer;
}
}  // namespace torch

namespace t2t {

struct CheckpointMeta {
  int64_t step = 0;
  std::string reader_state;  // the input pipeline's position, opaque here
  std::string hparams_yaml;  // the hparams the model was built with
  bool has_rng_state = false;  // set by load_checkpoint when the file had one
  // Each data-parallel worker's CPU generator state (cpu_rng_state()), by
  // rank; empty for a single process, whose state is the file's own.
  std::vector<std::string> worker_rng_states;
  // Each worker's CUDA generator state (cuda_rng_state()), by rank; empty
  // off GPUs.
  std::vector<std::string> worker_cuda_rng_states;
  // fp16 loss scale and its overflow-free steps (0 and 0: not scaled).
  double loss_scale = 0;
  int64_t loss_scale_good_steps = 0;
  // "" for a model in its own dtypes; "int8" for one saved with its
  // matrices in int8 for decoding (t2t/translate/int8_checkpoint.h).
  std::string weights;
};

// The default CPU generator's state as bytes, and back. set_cpu_rng_state
// throws t2t::Error on bytes that are no such state.
std::string cpu_rng_state();
void set_cpu_rng_state(const std::string& state);

// The same for CUDA device `device` (cuda_loader.h): t2t::Error when CUDA
// is not loaded or the bytes are no such state.
std::string cuda_rng_state(int device);
void set_cuda_rng_state(int device, const std::string& state);

// Writes <dir>/model.ckpt-<step>.pt and points <dir>/checkpoint at it, then
// deletes the oldest checkpoints beyond `keep_max` (0: keep all). `optimizer`
// may be null (averaged or exported models). Returns the path written.
std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer* optimizer, const CheckpointMeta& meta,
                            int keep_max);

// Loads into `model` (and `optimizer`, when given and in the file); restores
// the CPU generator when `restore_rng`. Every parameter and buffer must be
// in the file with the same shape, else a t2t::Error lists the differences.
CheckpointMeta load_checkpoint(const std::string& path, torch::nn::Module& model,
                               torch::optim::Optimizer* optimizer, bool restore_rng);

// A checkpoint's model tensors (parameters and buffers) by name.
using TensorMap = std::map<std::string, at::Tensor>;

// Reads a checkpoint's model tensors and meta without building the model.
// Throws t2t::Error naming the file when it is missing or not a checkpoint.
TensorMap read_checkpoint_tensors(const std::string& path, CheckpointMeta* meta);

// Sets every parameter and buffer of `model` from `tensors`, with
// load_checkpoint's checks, naming `path`. Left as they are: parameters
// named in `leave`, and empty ones `tensors` lacks (a float weight an int8
// layer replaced). The model takes the tensors themselves where dtype and
// device fit (no copy), so `tensors` must not be written to afterwards.
void load_model_tensors(const TensorMap& tensors, torch::nn::Module& model,
                        const std::string& path, const std::set<std::string>& leave = {});

// Writes <dir>/model.ckpt-<meta.step>.pt holding `tensors` as the model,
// with `meta` but no optimizer, random or loss-scale state, and points
// <dir>/checkpoint at it. Returns the path written.
std::string save_checkpoint_tensors(const std::string& dir, const TensorMap& tensors,
                                    const CheckpointMeta& meta);

// Copies the checkpoint `path` into `dir` (through a rename), points
// <dir>/checkpoint at it, and removes every other checkpoint of `dir`.
// Returns the path of the copy.
std::string copy_checkpoint(const std::string& path, const std::string& dir);

// The checkpoints in `dir`, oldest first (by step).
std::vector<std::string> list_checkpoints(const std::string& dir);

// The latest checkpoint of `dir` ("" when there is none): the one the
// `checkpoint` file names, else the highest step present.
std::string latest_checkpoint(const std::string& dir);

// The step encoded in a checkpoint's file name, -1 if it has none.
int64_t checkpoint_step(const std::string& path);

}  // namespace t2t
