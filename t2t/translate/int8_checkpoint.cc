#include "t2t/translate/int8_checkpoint.h"

#include <torch/torch.h>

#include <set>

#include "t2t/core/error.h"
#include "t2t/model/inference_model.h"
#include "t2t/model/t2t_model.h"

namespace t2t {
namespace {

constexpr const char* kScaleSuffix = "_int8_scale";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The model's int8 side, or an Error that says it has none.
InferenceModel& int8_side(T2TModel& model) { return inference_model(model, "int8 weights"); }
const InferenceModel& int8_side(const T2TModel& model) {
  return inference_model(const_cast<T2TModel&>(model), "int8 weights");
}

}  // namespace

std::string save_int8_checkpoint(const T2TModel& model, const std::string& dir,
                                 CheckpointMeta meta) {
  TensorMap tensors;
  for (const auto& p : model.named_parameters()) tensors[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) tensors[b.key()] = b.value();
  for (auto& [name, w] : int8_side(model).int8_weights()) {
    // The int8 values take the place of the float matrix they stand for.
    tensors[name] = w.values;
    tensors[name + kScaleSuffix] = w.scales;
  }
  meta.weights = "int8";
  return save_checkpoint_tensors(dir, tensors, meta);
}

void load_int8_tensors(TensorMap tensors, T2TModel& model, const std::string& path) {
  Int8WeightMap int8;
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (!ends_with(it->first, kScaleSuffix)) {
      ++it;
      continue;
    }
    const std::string name = it->first.substr(0, it->first.size() - std::string(kScaleSuffix).size());
    const auto values = tensors.find(name);
    if (values == tensors.end() || values->second.scalar_type() != torch::kChar)
      throw Error("int8 checkpoint '" + path + "' has scales for " + name +
                  " but no int8 values; the file is damaged");
    int8[name] = {values->second, it->second};
    tensors.erase(values);
    it = tensors.erase(it);
  }
  // The float tensors first: an int8 layer packs its bias with its weights.
  std::set<std::string> replaced;
  for (const auto& [name, w] : int8) replaced.insert(name);
  load_model_tensors(tensors, model, path, replaced);
  try {
    int8_side(model).load_int8_weights(std::move(int8));
  } catch (const Error& e) {
    throw Error("int8 checkpoint '" + path + "': " + e.what());
  }
}

}  // namespace t2t
