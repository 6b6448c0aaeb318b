// Which variables of T2T's Evolved Transformer checkpoints make each
// parameter. Under "evolved_transformer/body/{encoder,decoder}/layer_<i>/",
// each block has its own scope, within which T2T's unnamed layers are
// numbered in the order they are made (dense, dense_1; layer_prepostprocess,
// layer_prepostprocess_1):
//   encoder: gated_linear_unit, conv_branches, self_attention, dense_layers
//   decoder: 16_head_self_attention, first_attend_to_encoder, conv_branches,
//            self_attention, second_attend_to_encoder, dense_layers
// TensorFlow keeps a convolution's kernel [width, in, out] (t2t: [out, in,
// width]), a separable one's depthwise kernel [width, in, 1] (t2t: [in, 1,
// width]) and its pointwise kernel [1, in, out] (t2t: [out, in, 1]).
#include <map>
#include <regex>
#include <string>
#include <utility>

#include "models/evolved_transformer/evolved_transformer.h"
#include "models/transformer_tf_names.h"
#include "t2t/core/error.h"
#include "t2t/io/tf_checkpoint.h"

namespace t2t {
namespace {

const std::string kScope = "evolved_transformer/";

// t2t's module -> (T2T's block scope, the layer's scope within it).
struct Place {
  std::string block, layer;
};

const std::map<std::string, Place>& encoder_places() {
  static const std::map<std::string, Place> places = {
      {"glu_pre", {"gated_linear_unit", "layer_prepostprocess"}},
      {"glu_values", {"gated_linear_unit", "dense"}},
      {"glu_gates", {"gated_linear_unit", "dense_1"}},
      {"glu_post", {"gated_linear_unit", "layer_postprocess"}},
      {"conv_pre", {"conv_branches", "layer_prepostprocess"}},
      {"conv_left", {"conv_branches", "dense"}},
      {"conv_right", {"conv_branches", "standard_conv_3x1"}},
      {"conv_mid_pre", {"conv_branches", "layer_prepostprocess_1"}},
      {"conv_separable", {"conv_branches", "separable_conv_9x1"}},
      {"conv_post", {"conv_branches", "layer_postprocess"}},
      {"self_attention_pre", {"self_attention", "layer_prepostprocess"}},
      {"self_attention", {"self_attention", "multihead_attention"}},
      {"self_attention_post", {"self_attention", "layer_postprocess"}},
      {"dense_pre", {"dense_layers", "layer_prepostprocess"}},
      {"dense_1", {"dense_layers", "dense"}},
      {"dense_2", {"dense_layers", "dense_1"}},
      {"dense_post", {"dense_layers", "layer_postprocess"}},
  };
  return places;
}

const std::map<std::string, Place>& decoder_places() {
  static const std::map<std::string, Place> places = {
      {"attention_pre", {"16_head_self_attention", "layer_prepostprocess"}},
      {"wide_attention", {"16_head_self_attention", "multihead_attention"}},
      {"first_memory_attention", {"first_attend_to_encoder", "multihead_attention"}},
      {"conv_pre", {"conv_branches", "layer_prepostprocess"}},
      {"conv_left", {"conv_branches", "separable_conv11x1"}},
      {"conv_right", {"conv_branches", "separable_conv_7x1_1"}},
      {"conv_mid_pre", {"conv_branches", "layer_prepostprocess_1"}},
      {"conv_final", {"conv_branches", "separable_conv_7x1_2"}},
      {"conv_post", {"conv_branches", "layer_postprocess"}},
      {"self_attention_pre", {"self_attention", "layer_prepostprocess"}},
      {"self_attention", {"self_attention", "multihead_attention"}},
      {"self_attention_post", {"self_attention", "layer_postprocess"}},
      {"memory_pre", {"second_attend_to_encoder", "layer_prepostprocess"}},
      {"second_memory_attention", {"second_attend_to_encoder", "multihead_attention"}},
      {"memory_post", {"second_attend_to_encoder", "layer_postprocess"}},
      {"dense_pre", {"dense_layers", "layer_prepostprocess"}},
      {"dense_1", {"dense_layers", "dense"}},
      {"dense_mid_pre", {"dense_layers", "layer_prepostprocess_1"}},
      {"dense_2", {"dense_layers", "dense_1"}},
      {"dense_post", {"dense_layers", "layer_postprocess"}},
  };
  return places;
}

// The variables of parameter `rest` of the layer at `scope`; empty parts
// when there is no such parameter.
TFSource layer_source(const std::string& scope, const std::string& rest, int64_t dim) {
  static const std::regex norm_re(R"(layer_norm_(\d+)\.(weight|bias))");
  std::smatch m;
  TFSource s = attention_tf_source(scope, rest);
  if (!s.parts.empty()) return s;
  if (std::regex_match(rest, m, norm_re)) {
    s.parts = {{layer_norm_tf_name(scope, std::stoi(m[1]), m[2])}};
  } else if (rest == "weight" && dim == 3) {  // a convolution
    s.permute = {2, 1, 0};  // [width, in, out] -> [out, in, width]
    s.parts = {{scope + "/kernel"}};
  } else if (rest == "weight") {  // dense
    s.transpose = true;
    s.parts = {{scope + "/kernel"}};
  } else if (rest == "bias") {
    s.parts = {{scope + "/bias"}};
  } else if (rest == "depthwise") {
    s.permute = {1, 2, 0};  // [width, in, 1] -> [in, 1, width]
    s.parts = {{scope + "/depthwise_kernel"}};
  } else if (rest == "pointwise") {
    s.permute = {2, 1, 0};  // [1, in, out] -> [out, in, 1]
    s.parts = {{scope + "/pointwise_kernel"}};
  }
  return s;
}

}  // namespace

TFSources EvolvedTransformer::tensorflow_sources(const TFHas& has,
                                                 int64_t target_space_id) const {
  static const std::regex layer_re(R"((encoder|decoder)\.(\d+)\.(\w+)\.(.+))");
  static const std::regex final_re(R"((encoder|decoder)_final\.layer_norm_(\d+)\.(weight|bias))");
  TFSources out;
  for (const auto& named : named_parameters()) {
    const std::string& name = named.key();
    TFSource s;
    std::smatch m;
    if (auto vocabulary =
            vocabulary_tf_source(name, named.value(), matrices_, hidden_size(), kScope, has)) {
      s = std::move(*vocabulary);
    } else if (name == "target_space_embedding") {
      s.parts = {{kScope + "body/target_space_embedding/kernel"}};
      s.row = target_space_id;
    } else if (std::regex_match(name, m, final_re)) {
      s.parts = {{layer_norm_tf_name(kScope + "body/" + m[1].str() + "/layer_prepostprocess",
                                     std::stoi(m[2]), m[3])}};
    } else if (std::regex_match(name, m, layer_re)) {
      const auto& places = m[1] == "encoder" ? encoder_places() : decoder_places();
      const auto place = places.find(m[3]);
      if (place != places.end())
        s = layer_source(kScope + "body/" + m[1].str() + "/layer_" + m[2].str() + "/" +
                             place->second.block + "/" + place->second.layer,
                         m[4], named.value().dim());
    }
    if (s.parts.empty())
      throw Error("the evolved transformer's parameter " + name +
                  " has no counterpart in T2T's checkpoints.");
    out.emplace_back(name, std::move(s));
  }
  return out;
}

void EvolvedTransformer::load_tensorflow(const TFCheckpointReader& reader,
                                         int64_t target_space_id) {
  const auto has = [&](const std::string& n) { return reader.has(n); };
  load_tf_sources(*this, tensorflow_sources(has, target_space_id), reader, "evolved transformer",
                  "hidden_size " + std::to_string(hidden_size()) +
                      ", the layer counts and vocabularies of {hparams_set} and {problem}");
}

std::vector<std::pair<std::string, torch::Tensor>> EvolvedTransformer::tensorflow_slots(
    const TFCheckpointReader& reader, int64_t target_space_id, const std::string& prefix,
    const std::string& suffix) const {
  const auto has = [&](const std::string& n) { return reader.has(n); };
  return tf_slots(tensorflow_sources(has, target_space_id), reader, prefix, suffix);
}

}  // namespace t2t
