#include "t2t/model/tf_sources.h"

#include <torch/torch.h>

#include <set>

#include "t2t/core/error.h"
#include "t2t/core/string_util.h"
#include "t2t/io/tf_checkpoint.h"

namespace t2t {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::vector<std::string> TFSource::names() const {
  std::vector<std::string> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

std::vector<std::string> tf_shards(const std::string& scope, const TFHas& has) {
  std::vector<std::string> out;
  for (int i = 0; has(scope + "/weights_" + std::to_string(i)); ++i)
    out.push_back(scope + "/weights_" + std::to_string(i));
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
    if (!source.permute.empty()) {
      if (t.dim() != static_cast<int64_t>(source.permute.size()))
        throw Error("checkpoint " + reader.prefix() + ": " + prefix + part[0] + suffix + " is " +
                    shape_string(t.sizes().vec()) + ", not of " +
                    std::to_string(source.permute.size()) + " dimensions");
      t = t.permute(source.permute);
    }
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

std::vector<std::pair<std::string, torch::Tensor>> tf_slots(const TFSources& sources,
                                                           const TFCheckpointReader& reader,
                                                           const std::string& prefix,
                                                           const std::string& suffix) {
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

void load_tf_sources(torch::nn::Module& model, const TFSources& sources,
                     const TFCheckpointReader& reader, const std::string& what,
                     const std::string& sizes) {
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
    throw OptionError("hparams_set", where + " lacks variables this " + what + " needs: " +
                                         join(missing, ", ") + ". Is it a " + what +
                                         " of these sizes (" + sizes + ")?");
  if (!unused.empty())
    throw Error(where + " holds variables this " + what + " has no use for: " +
                join(unused, ", ") +
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
    throw Error(where + " does not fit this " + what + ": " + join(mismatched, "; ") + ".");
}

}  // namespace t2t
