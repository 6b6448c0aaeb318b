#include "models/transformer_tf_names.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "models/transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/string_util.h"
#include "t2t/io/tf_checkpoint.h"

namespace t2t {
namespace {

const std::string kScope = "transformer/";

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The shards weights_0, weights_1, ... of an embedding scope, as many as the
// checkpoint has (T2T's symbol_modality_num_shards).
std::vector<std::string> shards(const std::string& scope,
                                const std::function<bool(const std::string&)>& has) {
  std::vector<std::string> out;
  for (int i = 0; has(scope + "/weights_" + std::to_string(i)); ++i)
    out.push_back(scope + "/weights_" + std::to_string(i));
  return out;
}

// T2T's scope of a layer norm: the k-th norm (k > 0 adds "_k") of a
// pre-processing (layer_prepostprocess) or post-processing
// (layer_postprocess, as in transformer_base_v1's checkpoints) step.
std::string norm_scope(const std::string& step, int k) {
  return step + "/layer_norm" + (k > 0 ? "_" + std::to_string(k) : "");
}

std::string norm_variable(const std::string& param) {
  return param == "weight" ? "layer_norm_scale" : "layer_norm_bias";
}

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
        s.parts = {{base + sub + "/" + norm_scope(step, std::stoi(m[1])) + "/" +
                    norm_variable(m[2])}};
        return s;
      }
    }
  }
  const std::string attention = base + module + "/multihead_attention/";
  if (module == "self_attention" || module == "encdec_attention") {
    s.transpose = true;
    if (rest == "qkv.weight") {
      s.parts = {{attention + "q/kernel"}, {attention + "k/kernel"}, {attention + "v/kernel"}};
    } else if (rest == "q.weight") {
      s.parts = {{attention + "q/kernel"}};
    } else if (rest == "kv.weight") {
      s.parts = {{attention + "k/kernel"}, {attention + "v/kernel"}};
    } else if (rest == "output.weight") {
      s.parts = {{attention + "output_transform/kernel"}};
    }
    if (module == "self_attention" && (rest == "relative_keys" || rest == "relative_values")) {
      // T2T's tables are laid out as t2t's: [2 * max + 1, depth].
      s.transpose = false;
      s.parts = {{attention + "dot_product_attention_relative/relative_positions_" +
                  rest.substr(9) + "/embeddings"}};
    }
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

std::vector<std::string> TFSource::names() const {
  std::vector<std::string> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

std::vector<std::pair<std::string, TFSource>> transformer_tf_sources(
    const Transformer& model, const std::function<bool(const std::string&)>& has,
    int64_t target_space_id) {
  const int64_t hidden = model.hidden_size();
  // T2T's scope of each role of an embedding matrix: the role's own when
  // the checkpoint has it, else the "shared" matrix of that vocabulary size
  // (T2T may share the embeddings and keep the softmax apart).
  auto role_scope = [&](const torch::Tensor& weights, const std::string& own) {
    const std::string modality = kScope + "symbol_modality_" + std::to_string(weights.size(0)) +
                                 "_" + std::to_string(hidden) + "/";
    return has(modality + own + "/weights_0") ? modality + own : modality + "shared";
  };
  struct Role {
    const torch::Tensor* weights;
    std::string own;
  };
  const std::vector<Role> roles = {{&model.input_embedding(), "input_emb"},
                                   {&model.target_embedding(), "target_emb"},
                                   {&model.softmax_weights(), "softmax"}};

  static const std::regex layer_re(R"((encoder|decoder)\.(\d+)\.(\w+)\.(.+))");
  static const std::regex final_re(R"((encoder|decoder)_final\.layer_norm_(\d+)\.(weight|bias))");
  std::vector<std::pair<std::string, TFSource>> out;
  for (const auto& named : model.named_parameters()) {
    const std::string& name = named.key();
    TFSource s;
    std::smatch m;
    if (name == "shared" || name == "input_emb" || name == "target_emb" || name == "softmax") {
      // Every role this one matrix plays must be one matrix in T2T too.
      std::set<std::string> scopes;
      std::vector<std::string> played;
      for (const Role& role : roles) {
        if (!role.weights->is_same(named.value())) continue;
        scopes.insert(role_scope(*role.weights, role.own));
        played.push_back(role.own);
      }
      if (scopes.size() != 1) {
        throw Error("the checkpoint keeps apart what this transformer shares (" +
                    join(played, ", ") + " are one matrix here, " +
                    join(std::vector<std::string>(scopes.begin(), scopes.end()), " and ") +
                    " there): set hparams shared_embedding_and_softmax_weights, "
                    "shared_target_embedding_and_softmax_weights or shared_embedding as the "
                    "run that wrote it had them.");
      }
      s.parts = {shards(*scopes.begin(), has)};
      if (s.parts[0].empty()) s.parts[0] = {*scopes.begin() + "/weights_0"};  // reported missing
    } else if (name == "target_space_embedding") {
      s.parts = {{kScope + "body/target_space_embedding/kernel"}};
      s.row = target_space_id;
    } else if (std::regex_match(name, m, final_re)) {
      s.parts = {{kScope + "body/" + m[1].str() + "/" +
                  norm_scope("layer_prepostprocess", std::stoi(m[2])) + "/" +
                  norm_variable(m[3])}};
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

torch::Tensor assemble_tf_tensor(const TFSource& source, const TFCheckpointReader& reader,
                                 const std::string& prefix, const std::string& suffix) {
  std::vector<torch::Tensor> parts;
  for (const auto& part : source.parts) {
    std::vector<torch::Tensor> blocks;
    for (const std::string& name : part) {
      const std::string full = prefix + name + suffix;
      const TFTensorEntry& entry = reader.entry(full);
      std::vector<float> values = reader.read_floats(full);
      blocks.push_back(torch::from_blob(values.data(), entry.shape, torch::kFloat).clone());
    }
    torch::Tensor t = blocks.size() == 1 ? blocks[0] : torch::cat(blocks, 0);
    parts.push_back(source.transpose ? t.t() : t);
  }
  torch::Tensor whole = parts.size() == 1 ? parts[0] : torch::cat(parts, 0);
  if (source.row >= 0) {
    if (whole.dim() != 2 || source.row >= whole.size(0))
      throw Error("checkpoint " + reader.prefix() + ": " + prefix + source.names()[0] + suffix +
                  " has no row " + std::to_string(source.row) + " (shape " +
                  shape_string(whole.sizes().vec()) + ")");
    whole = whole[source.row];
  }
  return whole.contiguous();
}

bool is_tf_training_variable(const std::string& name) {
  return name == "global_step" || starts_with(name, "training/") ||
         starts_with(name, "losses_avg/") || starts_with(name, "train_stats/") ||
         ends_with(name, "/Adam") || ends_with(name, "/Adam_1");
}

void Transformer::load_tensorflow(const TFCheckpointReader& reader, int64_t target_space_id) {
  load_transformer_from_tf(*this, reader, target_space_id);
}

std::vector<std::pair<std::string, torch::Tensor>> Transformer::tensorflow_slots(
    const TFCheckpointReader& reader, int64_t target_space_id, const std::string& prefix,
    const std::string& suffix) const {
  const auto has = [&](const std::string& n) { return reader.has(n); };
  const auto sources = transformer_tf_sources(*this, has, target_space_id);
  std::vector<std::string> missing;
  for (const auto& [param, source] : sources)
    for (const std::string& name : source.names())
      if (!reader.has(prefix + name + suffix)) missing.push_back(prefix + name + suffix);
  if (!missing.empty())
    throw Error("T2T checkpoint " + reader.prefix() + " lacks " + join(missing, ", "));
  std::vector<std::pair<std::string, torch::Tensor>> slots;
  slots.reserve(sources.size());
  for (const auto& [param, source] : sources)
    slots.emplace_back(param, assemble_tf_tensor(source, reader, prefix, suffix));
  return slots;
}

void load_transformer_from_tf(Transformer& model, const TFCheckpointReader& reader,
                              int64_t target_space_id) {
  const auto has = [&](const std::string& n) { return reader.has(n); };
  const auto sources = transformer_tf_sources(model, has, target_space_id);
  std::vector<std::string> missing, mismatched;
  std::set<std::string> used;
  for (const auto& [param, source] : sources) {
    for (const std::string& name : source.names()) {
      used.insert(name);
      if (!reader.has(name)) missing.push_back(name);
    }
  }
  std::vector<std::string> unused;
  for (const std::string& name : reader.names())
    if (!used.count(name) && !is_tf_training_variable(name)) unused.push_back(name);
  const std::string where = "T2T checkpoint " + reader.prefix();
  if (!missing.empty())
    throw OptionError("hparams_set",
                      where + " lacks variables this transformer needs: " + join(missing, ", ") +
                          ". Is it a Transformer of these sizes (hidden_size " +
                          std::to_string(model.hidden_size()) +
                          ", the layer counts and vocabularies of {hparams_set} and {problem})?");
  if (!unused.empty())
    throw Error(where + " holds variables this transformer has no use for: " + join(unused, ", ") +
                ". Is it another model, or were its layer counts or sharing set otherwise?");

  torch::NoGradGuard no_grad;
  auto params = model.named_parameters();
  for (const auto& [param, source] : sources) {
    torch::Tensor& target = params[param];
    const torch::Tensor value = assemble_tf_tensor(source, reader);
    if (value.sizes() != target.sizes()) {
      std::string shapes;
      for (const std::string& name : source.names())
        shapes += (shapes.empty() ? "" : ", ") + name + " " + shape_string(reader.entry(name).shape);
      mismatched.push_back(param + " needs " + shape_string(target.sizes().vec()) + " from " +
                           shapes);
      continue;
    }
    target.copy_(value.to(target.device(), target.scalar_type()));
  }
  if (!mismatched.empty())
    throw Error(where + " does not fit this transformer: " + join(mismatched, "; ") + ".");
}

}  // namespace t2t
