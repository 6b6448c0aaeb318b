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

#include <cstdint>
#include <string>

#include "t2t/model/tf_sources.h"

namespace t2t {

class TFCheckpointReader;
class Transformer;

// (t2t parameter name, its source) for every parameter of `model`, in
// order. `target_space_id`: the problem's row of the target-space table.
// Throws t2t::Error when the embeddings' sharing differs from the model's,
// or a parameter has no T2T counterpart.
TFSources transformer_tf_sources(const Transformer& model, const TFHas& has,
                                 int64_t target_space_id);

// T2T's variables of a MultiheadAttention parameter `rest` (qkv.weight,
// q.weight, kv.weight, output.weight, relative_keys, relative_values) whose
// T2T scope is `scope` (".../multihead_attention"); no parts for other names.
TFSource attention_tf_source(const std::string& scope, const std::string& rest);

// T2T's variable of parameter `param` (weight or bias) of the k-th layer
// norm (k > 0 adds "_k") in the pre/post-processing scope `scope`.
std::string layer_norm_tf_name(const std::string& scope, int k, const std::string& param);

// Sets every parameter of `model` from T2T's checkpoint (load_tf_sources).
void load_transformer_from_tf(Transformer& model, const TFCheckpointReader& reader,
                              int64_t target_space_id);

}  // namespace t2t
