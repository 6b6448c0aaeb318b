// T2T's TensorFlow variable names for the Transformer's parameters: which
// variables of a checkpoint written by Tensor2Tensor 1.x make each
// parameter of t2t's Transformer, and how.
//
// T2T stores dense kernels [in, out] (t2t: [out, in]), keeps query, key and
// value kernels apart (t2t fuses them), splits every embedding and softmax
// matrix into symbol_modality_num_shards row blocks, and keeps a 32-row
// target-space table of which one row is ever used. Its names, under the
// top scope "transformer/":
//   symbol_modality_<V>_<H>/{shared,input_emb,target_emb,softmax}/weights_<i>
//   body/target_space_embedding/kernel
//   body/{encoder,decoder}/layer_<i>/<sub>/multihead_attention/{q,k,v,output_transform}/kernel
//   body/{encoder,decoder}/layer_<i>/ffn/conv{1,2}/{kernel,bias}
//   body/{encoder,decoder}/layer_<i>/<sub>/layer_prepostprocess{,_1}/layer_norm/layer_norm_{scale,bias}
//   body/{encoder,decoder}/layer_prepostprocess/layer_norm/...   (the stack's last norm)
// where <sub> is self_attention, encdec_attention (decoder) or ffn, and
// layer_prepostprocess is the sub-layer's pre-processing, _1 its
// post-processing.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

class TFCheckpointReader;
class Transformer;

// How one t2t parameter is made from TensorFlow variables: each part is the
// row-wise concatenation of its variables (embedding shards); the parts,
// each transposed first when `transpose`, are concatenated along t2t's
// first axis (a fused query/key/value kernel). `row` >= 0 keeps that row of
// the result only, as a vector.
struct TFSource {
  std::vector<std::vector<std::string>> parts;
  bool transpose = false;
  int64_t row = -1;

  // Every variable named, in order.
  std::vector<std::string> names() const;
};

// (t2t parameter name, its source) for every parameter of `model`, in the
// model's order. `has` says whether the checkpoint holds a variable: it
// decides between shared and separate embeddings and counts the shards.
// `target_space_id` is the problem's row of T2T's target-space table.
// Throws t2t::Error when the checkpoint's embeddings are laid out otherwise
// than the model's (shared where the model keeps them apart, or the other
// way round) or a parameter has no T2T counterpart.
std::vector<std::pair<std::string, TFSource>> transformer_tf_sources(
    const Transformer& model, const std::function<bool(const std::string&)>& has,
    int64_t target_space_id);

// The tensor `source` describes, read from `reader`, every variable name
// wrapped as prefix + name + suffix (so that "grad/" or "/m" pick related
// tensors). float32, on the CPU.
torch::Tensor assemble_tf_tensor(const TFSource& source, const TFCheckpointReader& reader,
                                 const std::string& prefix = "", const std::string& suffix = "");

// True for variables that are no part of a model: the step counters,
// optimizer slots and running averages T2T's trainer keeps beside it.
bool is_tf_training_variable(const std::string& name);

// Sets every parameter of `model` from T2T's checkpoint. Throws t2t::Error
// naming the checkpoint and the variables at fault when one is missing, has
// another shape than the parameter needs, or when the checkpoint holds model
// variables that this model has no use for (another model or other sizes).
void load_transformer_from_tf(Transformer& model, const TFCheckpointReader& reader,
                              int64_t target_space_id);

}  // namespace t2t
