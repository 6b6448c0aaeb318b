#include "models/transformer_tf_names.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "models/symbol_modality.h"
#include "models/transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/string_util.h"
#include "t2t/io/tf_checkpoint.h"

namespace t2t {
namespace {

const std::string kScope = "transformer/";

// The source of a parameter of the encoder or decoder stacks, from its t2t
// name split as <stack>.<layer>.<module>.<rest>.
TFSource layer_source(const std::string& stack, const std::string& layer,
                      const std::string& module, const std::string& rest,
                      const std::string& full_name) {
  const std::string base = kScope + "body/" + stack + "/layer_" + layer + "/";
  static const std::regex norm_re(R"(layer_norm_(\d+)\.(weight|bias))");
  std::smatch m;
  TFSource s;
  for (const std::string sub : {"self_attention", "encdec_attention", "ffn"}) {
    for (const auto& [suffix, step] :
         {std::pair<std::string, std::string>{"_pre", "layer_prepostprocess"},
          {"_post", "layer_postprocess"}}) {
      if (module == sub + suffix && std::regex_match(rest, m, norm_re)) {
        s.parts = {{layer_norm_tf_name(base + sub + "/" + step, std::stoi(m[1]), m[2])}};
        return s;
      }
    }
  }
  if (module == "self_attention" || module == "encdec_attention") {
    s = attention_tf_source(base + module + "/multihead_attention", rest);
  } else if (module == "ffn" && (rest == "conv1.weight" || rest == "conv2.weight")) {
    s.transpose = true;
    s.parts = {{base + "ffn/" + rest.substr(0, 5) + "/kernel"}};
  } else if (module == "ffn" && (rest == "conv1.bias" || rest == "conv2.bias")) {
    s.parts = {{base + "ffn/" + rest.substr(0, 5) + "/bias"}};
  }
  if (s.parts.empty())
    throw Error("the transformer's parameter " + full_name +
                " has no counterpart in T2T's checkpoints (T2T's 'z' pre/post-processing gates "
                "and other extensions cannot be imported).");
  return s;
}

}  // namespace

TFSource attention_tf_source(const std::string& scope, const std::string& rest) {
  TFSource s;
  s.transpose = true;  // dense kernels; kept only with parts
  if (rest == "qkv.weight") {
    s.parts = {{scope + "/q/kernel"}, {scope + "/k/kernel"}, {scope + "/v/kernel"}};
  } else if (rest == "q.weight") {
    s.parts = {{scope + "/q/kernel"}};
  } else if (rest == "kv.weight") {
    s.parts = {{scope + "/k/kernel"}, {scope + "/v/kernel"}};
  } else if (rest == "output.weight") {
    s.parts = {{scope + "/output_transform/kernel"}};
  } else if (rest == "relative_keys" || rest == "relative_values") {
    // T2T's tables are laid out as t2t's: [2 * max + 1, depth].
    s.transpose = false;
    s.parts = {{scope + "/dot_product_attention_relative/relative_positions_" + rest.substr(9) +
                "/embeddings"}};
  }
  if (s.parts.empty()) return TFSource();
  return s;
}

std::string layer_norm_tf_name(const std::string& scope, int k, const std::string& param) {
  return scope + "/layer_norm" + (k > 0 ? "_" + std::to_string(k) : "") + "/" +
         (param == "weight" ? "layer_norm_scale" : "layer_norm_bias");
}

TFSources transformer_tf_sources(const Transformer& model, const TFHas& has,
                                 int64_t target_space_id) {
  const int64_t hidden = model.hidden_size();
  const VocabularyMatrices matrices{model.input_embedding(), model.target_embedding(),
                                    model.softmax_weights()};
  static const std::regex layer_re(R"((encoder|decoder)\.(\d+)\.(\w+)\.(.+))");
  static const std::regex final_re(R"((encoder|decoder)_final\.layer_norm_(\d+)\.(weight|bias))");
  std::vector<std::pair<std::string, TFSource>> out;
  for (const auto& named : model.named_parameters()) {
    const std::string& name = named.key();
    TFSource s;
    std::smatch m;
    if (auto vocabulary = vocabulary_tf_source(name, named.value(), matrices, hidden, kScope, has)) {
      s = std::move(*vocabulary);
    } else if (name == "target_space_embedding") {
      s.parts = {{kScope + "body/target_space_embedding/kernel"}};
      s.row = target_space_id;
    } else if (std::regex_match(name, m, final_re)) {
      s.parts = {{layer_norm_tf_name(kScope + "body/" + m[1].str() + "/layer_prepostprocess",
                                     std::stoi(m[2]), m[3])}};
    } else if (std::regex_match(name, m, layer_re)) {
      s = layer_source(m[1], m[2], m[3], m[4], name);
    } else {
      throw Error("the transformer's parameter " + name +
                  " has no counterpart in T2T's checkpoints.");
    }
    out.emplace_back(name, std::move(s));
  }
  return out;
}

void Transformer::load_tensorflow(const TFCheckpointReader& reader, int64_t target_space_id) {
  load_transformer_from_tf(*this, reader, target_space_id);
}

std::vector<std::pair<std::string, torch::Tensor>> Transformer::tensorflow_slots(
    const TFCheckpointReader& reader, int64_t target_space_id, const std::string& prefix,
    const std::string& suffix) const {
  const auto has = [&](const std::string& n) { return reader.has(n); };
  return tf_slots(transformer_tf_sources(*this, has, target_space_id), reader, prefix, suffix);
}

TFSources Transformer::tensorflow_sources(const TFHas& has, int64_t target_space_id) const {
  return transformer_tf_sources(*this, has, target_space_id);
}

void load_transformer_from_tf(Transformer& model, const TFCheckpointReader& reader,
                              int64_t target_space_id) {
  const auto has = [&](const std::string& n) { return reader.has(n); };
  load_tf_sources(model, transformer_tf_sources(model, has, target_space_id), reader,
                  "transformer",
                  "hidden_size " + std::to_string(model.hidden_size()) +
                      ", the layer counts and vocabularies of {hparams_set} and {problem}");
}

}  // namespace t2t
