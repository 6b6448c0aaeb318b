// Checkpoints, shared by the trainer, the decoder and checkpoint averaging:
// model parameters and buffers, optionally the optimizer's state, and what an
// exact resume needs (step, random generator state, input position), in one
// file `model.ckpt-<step>.pt` per step, plus a `checkpoint` file naming the
// latest, as T2T's output directories have. Every file is written to a
// temporary name and renamed, so a crash never leaves a half-written latest.
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
  // Each data-parallel worker's CPU generator state, by rank (empty for a
  // single process: the file's own random state is that process's). Opaque
  // bytes from cpu_rng_state().
  std::vector<std::string> worker_rng_states;
  // Each worker's CUDA generator state, by rank, for a run on GPUs (empty
  // otherwise): dropout there draws from it. Opaque bytes from
  // cuda_rng_state().
  std::vector<std::string> worker_cuda_rng_states;
  // fp16 dynamic loss scaling: the scale, and the overflow-free steps since
  // it last changed (0 and 0: the run does not scale its loss).
  double loss_scale = 0;
  int64_t loss_scale_good_steps = 0;
  // "" for a model in its own dtypes; "int8" for one saved with its
  // matrices in int8 for decoding (t2t/translate/int8_checkpoint.h).
  std::string weights;
};

// The default CPU generator's state as bytes, and back: how workers' random
// states travel to the chief and into checkpoints. set_cpu_rng_state throws
// t2t::Error on bytes that are no such state.
std::string cpu_rng_state();
void set_cpu_rng_state(const std::string& state);

// The same for the default generator of CUDA device `device`, through
// libt2t_cuda.so (cuda_loader.h): t2t::Error when CUDA is not loaded or the
// bytes are no such state.
std::string cuda_rng_state(int device);
void set_cuda_rng_state(int device, const std::string& state);

// Writes <dir>/model.ckpt-<step>.pt and points <dir>/checkpoint at it, then
// deletes the oldest checkpoints beyond `keep_max` (0: keep all). `optimizer`
// may be null (averaged or exported models). Returns the path written.
std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer* optimizer, const CheckpointMeta& meta,
                            int keep_max);

// Loads into `model` (and `optimizer`, when given and present in the file)
// and restores the CPU random generator when `restore_rng`. Every parameter
// and buffer of the model must be in the file with the same shape: otherwise
// a t2t::Error lists the differences (missing, unexpected, shape changes).
CheckpointMeta load_checkpoint(const std::string& path, torch::nn::Module& model,
                               torch::optim::Optimizer* optimizer, bool restore_rng);

// A checkpoint's model tensors by name ("encoder.layers.0.attention.q.weight"),
// parameters and buffers alike. Include <torch/torch.h> to use it.
using TensorMap = std::map<std::string, at::Tensor>;

// Reads the model tensors and the meta of a checkpoint without building the
// model (for averaging). Throws t2t::Error naming the file when it is
// missing or not a t2t checkpoint.
TensorMap read_checkpoint_tensors(const std::string& path, CheckpointMeta* meta);

// Sets every parameter and buffer of `model` from `tensors` (as
// read_checkpoint_tensors gives them), with the same checks and errors as
// load_checkpoint, naming `path`. A parameter of no elements that `tensors`
// lacks is left so: a float weight an int8 layer replaced; so are the
// parameters named in `leave`, for the caller to set. The model takes the
// tensors themselves where their dtype and device fit (no copy; its own
// are freed), so `tensors` should not be written to afterwards.
void load_model_tensors(const TensorMap& tensors, torch::nn::Module& model,
                        const std::string& path, const std::set<std::string>& leave = {});

// Writes <dir>/model.ckpt-<meta.step>.pt holding `tensors` as the model,
// with `meta` but no optimizer, random or loss-scale state, and points <dir>/checkpoint
// at it. load_checkpoint reads it into a model with those names and shapes.
// Returns the path written.
std::string save_checkpoint_tensors(const std::string& dir, const TensorMap& tensors,
                                    const CheckpointMeta& meta);

// Copies the checkpoint file `path` into `dir` under its own name (through
// a temporary file and a rename), points <dir>/checkpoint at it, then
// removes every other checkpoint of `dir`: `dir` then holds that one alone,
// whatever its step. Returns the path of the copy. For a run's best/.
std::string copy_checkpoint(const std::string& path, const std::string& dir);

// The checkpoints in `dir`, oldest first (by step).
std::vector<std::string> list_checkpoints(const std::string& dir);

// The latest checkpoint of `dir` ("" when there is none): the one the
// `checkpoint` file names, else the highest step present.
std::string latest_checkpoint(const std::string& dir);

// The step encoded in a checkpoint's file name, -1 if it has none.
int64_t checkpoint_step(const std::string& path);

}  // namespace t2t
