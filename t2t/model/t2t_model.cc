#include "t2t/model/t2t_model.h"

#include "t2t/core/error.h"

namespace t2t {

torch::Tensor labelled_positions(const torch::Tensor& targets) {
  return targets.reshape(-1).nonzero().squeeze(1);
}

torch::Tensor T2TModel::forward_labelled(const torch::Tensor& inputs, const torch::Tensor& targets) {
  const auto logits = forward(inputs, targets);
  return logits.reshape({-1, logits.size(-1)}).index_select(0, labelled_positions(targets));
}

void T2TModel::set_static_decoding(bool on, bool /*graphs*/) {
  if (on)
    throw OptionError("cuda_graphs", "model '" + name() + "' cannot decode at static shapes "
                                     "(CUDA graphs); decode it without {cuda_graphs}");
}

void T2TModel::quantize_int8() {
  throw OptionError("quantize", "model '" + name() + "' has no int8 implementation; decode it "
                                "without {quantize}");
}

Int8WeightMap T2TModel::int8_weights() const {
  throw Error("model '" + name() + "' has no int8 implementation; it cannot be saved in int8");
}

void T2TModel::load_int8_weights(Int8WeightMap) {
  throw Error("model '" + name() + "' has no int8 implementation; it cannot load int8 weights");
}

void T2TModel::load_tensorflow(const TFCheckpointReader&, int64_t) {
  throw Error("model '" + name() + "' cannot read Tensor2Tensor's TensorFlow checkpoints; only "
              "the transformer knows T2T's variable names");
}

std::vector<std::pair<std::string, torch::Tensor>> T2TModel::tensorflow_slots(
    const TFCheckpointReader&, int64_t, const std::string&, const std::string&) const {
  throw Error("model '" + name() + "' cannot read Tensor2Tensor's TensorFlow checkpoints; only "
              "the transformer knows T2T's variable names");
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

}  // namespace t2t
