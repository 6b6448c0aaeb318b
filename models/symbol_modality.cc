#include "models/symbol_modality.h"

#include <cmath>
#include <set>
#include <vector>

#include "models/transformer_layers.h"
#include "t2t/core/error.h"
#include "t2t/core/string_util.h"
#include "t2t/model/skip_init.h"

namespace t2t {
namespace {

bool bool_or(const HParams& hp, const std::string& name, bool fallback) {
  return hp.has(name) ? hp.get_bool(name) : fallback;
}

}  // namespace

VocabularyMatrices register_vocabulary_matrices(torch::nn::Module& model, const HParams& hp,
                                                const FeatureInfo& features, int64_t hidden,
                                                const std::string& what) {
  if (features.input_vocab_size <= 0 || features.target_vocab_size <= 0) {
    throw Error("the " + what + " needs positive vocabulary sizes, got inputs " +
                std::to_string(features.input_vocab_size) + " and targets " +
                std::to_string(features.target_vocab_size) + ".");
  }
  if (features.shared_vocabulary && features.input_vocab_size != features.target_vocab_size) {
    throw Error("a shared vocabulary must have one size, got inputs " +
                std::to_string(features.input_vocab_size) + " and targets " +
                std::to_string(features.target_vocab_size) + ".");
  }
  auto embedding = [&](const std::string& name, int64_t vocab) {
    if (skip_initialization()) return model.register_parameter(name, torch::empty({vocab, hidden}));
    return model.register_parameter(
        name, torch::randn({vocab, hidden}) * std::pow(static_cast<double>(hidden), -0.5));
  };
  // T2T shares the input embedding with the target one whenever the two
  // vocabularies merely have the same size (its variables are named by
  // size); here it takes the very same vocabulary.
  // T2T unsets shared_embedding_and_softmax_weights when the input and
  // target vocabularies differ in size (T2TModel.__init__), as on every
  // en-zh problem: the softmax then has a matrix of its own, apart from the
  // target embedding. Its hparams.json still says true; its checkpoints
  // hold three matrices.
  // t2t's own hparam shared_target_embedding_and_softmax_weights keeps the
  // softmax tied to the target embedding there (fewer weights to learn on
  // a small corpus); T2T's sets leave it off.
  const bool tie_softmax = hp.get_bool("shared_embedding_and_softmax_weights") &&
                           features.input_vocab_size == features.target_vocab_size;
  const bool tie_target_softmax =
      tie_softmax || bool_or(hp, "shared_target_embedding_and_softmax_weights", false);
  const bool share_inputs =
      features.shared_vocabulary && (tie_softmax || bool_or(hp, "shared_embedding", false));
  VocabularyMatrices m;
  if (tie_softmax) {
    m.target = m.softmax = embedding("shared", features.target_vocab_size);
  } else {
    m.target = embedding(share_inputs ? "shared" : "target_emb", features.target_vocab_size);
    m.softmax = tie_target_softmax ? m.target : embedding("softmax", features.target_vocab_size);
  }
  m.input = share_inputs ? m.target : embedding("input_emb", features.input_vocab_size);
  return m;
}

torch::Tensor register_target_space(torch::nn::Module& model, const HParams& hp, int64_t hidden,
                                    const std::string& initializer, double gain) {
  if (!bool_or(hp, "use_target_space_embedding", false)) return torch::Tensor();
  auto table = torch::empty({32, hidden});
  init_dense_weight(table, initializer, gain);
  return model.register_parameter("target_space_embedding", table[0].clone());
}

double embedding_scale(const HParams& hp, int64_t hidden, const std::string& what) {
  const std::string mode = hp.get_string("multiply_embedding_mode");
  if (mode != "sqrt_depth" && mode != "none") {
    throw Error("hparam multiply_embedding_mode='" + mode + "' is not supported by the " + what +
                "; use sqrt_depth or none.");
  }
  return mode == "sqrt_depth" ? std::sqrt(static_cast<double>(hidden)) : 1.0;
}

torch::Tensor embed_symbols(const torch::Tensor& weights, const torch::Tensor& ids, double scale) {
  // Zeroing rows for id 0 also keeps a shifted decoder input's first
  // position zero, as T2T's shift of the embedded targets leaves it.
  auto factor = ids.ne(0).to(weights.scalar_type());
  if (scale != 1.0) factor.mul_(scale);
  return torch::embedding(weights, ids) * factor.unsqueeze(-1);
}

torch::Tensor drop_symbols(const torch::Tensor& ids, double rate, bool training) {
  if (!training || rate <= 0.0) return ids;
  auto drop = torch::empty(ids.sizes(), ids.options().dtype(torch::kFloat)).bernoulli_(rate);
  return ids.masked_fill(drop.to(torch::kBool), 0);
}

std::optional<TFSource> vocabulary_tf_source(const std::string& name, const torch::Tensor& value,
                                             const VocabularyMatrices& matrices, int64_t hidden,
                                             const std::string& scope, const TFHas& has) {
  if (name != "shared" && name != "input_emb" && name != "target_emb" && name != "softmax")
    return std::nullopt;
  // T2T's scope of each role of an embedding matrix: the role's own when
  // the checkpoint has it, else the "shared" matrix of that vocabulary size
  // (T2T may share the embeddings and keep the softmax apart).
  auto role_scope = [&](const torch::Tensor& weights, const std::string& own) {
    const std::string modality = scope + "symbol_modality_" + std::to_string(weights.size(0)) +
                                 "_" + std::to_string(hidden) + "/";
    return has(modality + own + "/weights_0") ? modality + own : modality + "shared";
  };
  struct Role {
    const torch::Tensor* weights;
    std::string own;
  };
  const std::vector<Role> roles = {
      {&matrices.input, "input_emb"}, {&matrices.target, "target_emb"}, {&matrices.softmax, "softmax"}};
  // Every role this one matrix plays must be one matrix in T2T too.
  std::set<std::string> scopes;
  std::vector<std::string> played;
  for (const Role& role : roles) {
    if (!role.weights->is_same(value)) continue;
    scopes.insert(role_scope(*role.weights, role.own));
    played.push_back(role.own);
  }
  if (scopes.size() != 1) {
    throw Error("the checkpoint keeps apart what this model shares (" + join(played, ", ") +
                " are one matrix here, " +
                join(std::vector<std::string>(scopes.begin(), scopes.end()), " and ") +
                " there): set hparams shared_embedding_and_softmax_weights, "
                "shared_target_embedding_and_softmax_weights or shared_embedding as the "
                "run that wrote it had them.");
  }
  TFSource s;
  s.parts = {tf_shards(*scopes.begin(), has)};
  if (s.parts[0].empty()) s.parts[0] = {*scopes.begin() + "/weights_0"};  // reported missing
  return s;
}

}  // namespace t2t
