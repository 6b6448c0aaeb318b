#include "t2t/model/t2t_model.h"

#include "t2t/core/error.h"
#include "t2t/model/inference_model.h"
#include "t2t/model/tensorflow_import.h"

namespace t2t {

torch::Tensor labelled_positions(const torch::Tensor& targets) {
  return targets.reshape(-1).nonzero().squeeze(1);
}

torch::Tensor T2TModel::forward_labelled(const torch::Tensor& inputs, const torch::Tensor& targets) {
  const auto logits = forward(inputs, targets);
  return logits.reshape({-1, logits.size(-1)}).index_select(0, labelled_positions(targets));
}

std::pair<torch::Tensor, torch::Tensor> T2TModel::forward_labelled_with_attention(
    const torch::Tensor&, const torch::Tensor&, const AttentionProbe&) {
  throw Error("model '" + name() + "' cannot report its encoder-decoder attention, which word alignments and guided "
              "alignment read; use a Transformer");
}

InferenceModel* as_inference_model(T2TModel& model) {
  return dynamic_cast<InferenceModel*>(&model);
}

const InferenceModel* as_inference_model(const T2TModel& model) {
  return dynamic_cast<const InferenceModel*>(&model);
}

InferenceModel& inference_model(T2TModel& model, const std::string& for_what) {
  if (auto* m = as_inference_model(model)) return *m;
  throw Error("model '" + model.name() + "' has no " + for_what + ": it decodes in float32 only");
}

namespace {

Error cannot_import(const T2TModel& model) {
  return Error("model '" + model.name() + "' cannot read Tensor2Tensor's TensorFlow checkpoints; "
               "only a model that knows T2T's variable names can");
}

}  // namespace

TensorFlowImport& tensorflow_import(T2TModel& model) {
  if (auto* m = dynamic_cast<TensorFlowImport*>(&model)) return *m;
  throw cannot_import(model);
}

const TensorFlowImport& tensorflow_import(const T2TModel& model) {
  if (auto* m = dynamic_cast<const TensorFlowImport*>(&model)) return *m;
  throw cannot_import(model);
}

void T2TModel::reorder_state(DecoderState& state, const torch::Tensor& index) {
  torch::NoGradGuard no_grad;
  const auto idx = index.to(state.encoder_output.device(), torch::kLong);
  auto select = [&idx](torch::Tensor& t) {
    if (t.defined()) t = t.index_select(0, idx);
  };
  select(state.encoder_output);
  select(state.encoder_padding);
  // Self-attention caches are reordered whole, unused capacity included, so
  // that the next step still appends in place.
  for (auto& layer : state.layers) {
    select(layer.self_keys);
    select(layer.self_values);
    select(layer.memory_keys);
    select(layer.memory_values);
  }
}

bool T2TModel::restrict_output(DecoderState&, const torch::Tensor&) { return false; }

}  // namespace t2t
