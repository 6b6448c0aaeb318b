// Which variables of a Tensor2Tensor 1.x checkpoint make each parameter of
// t2t's Transformer. T2T stores dense kernels [in, out] (t2t: [out, in]),
// keeps q, k and v apart (t2t fuses them), splits embedding and softmax
// matrices into symbol_modality_num_shards row blocks, and keeps a 32-row
// target-space table of which one row is used. Under "transformer/":
//   symbol_modality_<V>_<H>/{shared,input_emb,target_emb,softmax}/weights_<i>
//   body/target_space_embedding/kernel
//   body/{encoder,decoder}/layer_<i>/<sub>/multihead_attention/{q,k,v,output_transform}/kernel
//   body/{encoder,decoder}/layer_<i>/self_attention/multihead_attention/
//       dot_product_attention_relative/relative_positions_{keys,values}/embeddings
//   body/{encoder,decoder}/layer_<i>/ffn/conv{1,2}/{kernel,bias}
//   body/{encoder,decoder}/layer_<i>/<sub>/layer_prepostprocess{,_1}/layer_norm/layer_norm_{scale,bias}
//   body/{encoder,decoder}/layer_prepostprocess/layer_norm/...   (the stack's last norm)
// where <sub> is self_attention, encdec_attention (decoder) or ffn;
// layer_prepostprocess is pre-processing, _1 post-processing.
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

// One t2t parameter from TensorFlow variables: each part concatenates its
// variables' rows (shards); the parts, transposed when `transpose`, are
// concatenated along t2t's first axis (fused q/k/v). `row` >= 0 keeps that
// row only, as a vector.
struct TFSource {
  std::vector<std::vector<std::string>> parts;
  bool transpose = false;
  int64_t row = -1;

  // Every variable named, in order.
  std::vector<std::string> names() const;
};

// (t2t parameter name, its source) for every parameter of `model`, in
// order. `has` says whether the checkpoint holds a variable.
// `target_space_id`: the problem's row of the target-space table. Throws
// t2t::Error when the embeddings' sharing differs from the model's, or a
// parameter has no T2T counterpart.
std::vector<std::pair<std::string, TFSource>> transformer_tf_sources(
    const Transformer& model, const std::function<bool(const std::string&)>& has,
    int64_t target_space_id);

// The tensor `source` describes, each variable read as prefix + name +
// suffix (e.g. "/m" for a slot). float32, on the CPU.
torch::Tensor assemble_tf_tensor(const TFSource& source, const TFCheckpointReader& reader,
                                 const std::string& prefix = "", const std::string& suffix = "");

// True for variables that are no part of a model: the step counters,
// optimizer slots and running averages T2T's trainer keeps beside it.
bool is_tf_training_variable(const std::string& name);

// Sets every parameter of `model` from T2T's checkpoint. Throws t2t::Error
// naming the checkpoint and variables at fault: missing, misshapen, or
// model variables this model has no use for.
void load_transformer_from_tf(Transformer& model, const TFCheckpointReader& reader,
                              int64_t target_space_id);

}  // namespace t2t
