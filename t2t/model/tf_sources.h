// How a model's parameters are assembled from the variables of a checkpoint
// Tensor2Tensor wrote, whatever the model: each model says which variables
// make each of its parameters (TensorFlowImport::tensorflow_sources), and
// the loading, the checks and the optimizer slots are done here, once.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace torch::nn {
class Module;
}

namespace t2t {

class TFCheckpointReader;

// One t2t parameter from TensorFlow variables: each part concatenates its
// variables' rows (shards); the parts, transposed when `transpose`, are
// concatenated along t2t's first axis (fused q/k/v). `row` >= 0 keeps that
// row only, as a vector. `permute`, when not empty, reorders the assembled
// tensor's dimensions instead of `transpose` (convolution kernels, which
// TensorFlow keeps [width, in, out] and LibTorch [out, in, width]).
struct TFSource {
  std::vector<std::vector<std::string>> parts;
  bool transpose = false;
  int64_t row = -1;
  std::vector<int64_t> permute;

  // Every variable named, in order.
  std::vector<std::string> names() const;
};

// (t2t parameter name, its source) for every parameter of a model, in its
// parameters' order.
using TFSources = std::vector<std::pair<std::string, TFSource>>;
// Whether the checkpoint holds a variable.
using TFHas = std::function<bool(const std::string&)>;

// The tensor `source` describes, each variable read as prefix + name +
// suffix (e.g. "/m" for a slot). float32, on the CPU.
at::Tensor assemble_tf_tensor(const TFSource& source, const TFCheckpointReader& reader,
                              const std::string& prefix = "", const std::string& suffix = "");

// True for variables that are no part of a model: the step counters,
// optimizer slots and running averages T2T's trainer keeps beside it.
bool is_tf_training_variable(const std::string& name);

// The shards weights_0, weights_1, ... of an embedding scope, as many as the
// checkpoint has (T2T's symbol_modality_num_shards).
std::vector<std::string> tf_shards(const std::string& scope, const TFHas& has);

// Sets every parameter of `model` from its sources. `what` names the model
// in errors and `sizes` says which hparams fix its variables' shapes.
// Throws t2t::Error naming the checkpoint and variables at fault: missing,
// misshapen, or model variables the model has no use for.
void load_tf_sources(torch::nn::Module& model, const TFSources& sources,
                     const TFCheckpointReader& reader, const std::string& what,
                     const std::string& sizes);

// What the checkpoint keeps beside each source's variables (prefix + name +
// suffix, e.g. Adam's slots), laid out as the parameters. Throws t2t::Error
// naming the variables missing.
std::vector<std::pair<std::string, at::Tensor>> tf_slots(const TFSources& sources,
                                                        const TFCheckpointReader& reader,
                                                        const std::string& prefix,
                                                        const std::string& suffix);

}  // namespace t2t
