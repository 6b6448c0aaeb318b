// T2T's symbol modality as its sequence-to-sequence models share it
// (layers/modalities.py): the input and target embeddings and the softmax
// matrix, which of them are one matrix, how ids are embedded, the
// target-space row added to the inputs, and the T2T variables each of them
// is read from. Every model registered here builds its vocabulary side
// with these, so the rules live in one place.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tf_sources.h"

namespace t2t {

// The three roles; a shared matrix is the same tensor in several of them.
struct VocabularyMatrices {
  torch::Tensor input;    // [input_vocab, hidden]
  torch::Tensor target;   // [target_vocab, hidden]
  torch::Tensor softmax;  // [target_vocab, hidden]
};

// Registers the matrices on `model` under T2T's role names (shared,
// input_emb, target_emb, softmax), drawn N(0, hidden^-0.5) as T2T draws
// them, shared as T2T shares them for `hp` and `features`. `what` names the
// model in errors about the vocabulary sizes.
VocabularyMatrices register_vocabulary_matrices(torch::nn::Module& model, const HParams& hp,
                                                const FeatureInfo& features, int64_t hidden,
                                                const std::string& what);

// T2T adds row `target_space_id` of a 32-row table to every input position.
// One problem is trained at a time, so only that row ever matters: it is
// registered as "target_space_embedding", a single vector drawn as that
// table would be with the model's dense initializer; undefined when
// use_target_space_embedding is off.
torch::Tensor register_target_space(torch::nn::Module& model, const HParams& hp, int64_t hidden,
                                    const std::string& initializer, double gain);

// sqrt(hidden) for multiply_embedding_mode sqrt_depth, 1 for none; throws
// t2t::Error naming the model for other modes.
double embedding_scale(const HParams& hp, int64_t hidden, const std::string& what);

// ids [...] -> [..., hidden]: rows of `weights` times `scale`, zero for id 0
// (T2T marks padding by all-zero embeddings).
torch::Tensor embed_symbols(const torch::Tensor& weights, const torch::Tensor& ids, double scale);

// T2T's symbol_dropout: ids replaced by 0 (padding) at `rate` in training.
torch::Tensor drop_symbols(const torch::Tensor& ids, double rate, bool training);

// The T2T variables of parameter `name` when it is one of `matrices` (under
// `scope`, e.g. "transformer/"), or nullopt for any other parameter. Throws
// t2t::Error when the checkpoint keeps apart what the model shares.
std::optional<TFSource> vocabulary_tf_source(const std::string& name, const torch::Tensor& value,
                                             const VocabularyMatrices& matrices, int64_t hidden,
                                             const std::string& scope, const TFHas& has);

}  // namespace t2t
