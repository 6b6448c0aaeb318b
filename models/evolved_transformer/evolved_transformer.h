// T2T's Evolved Transformer (So et al., 2019), registered as
// "evolved_transformer": the Transformer's inputs, embeddings and softmax
// with the cells evolved_transformer_layers.h builds, and its own decoding
// state (two self-attention caches per layer and the windows of its causal
// convolutions). Sets: evolved_transformer_hparams.cc.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/evolved_transformer/evolved_transformer_layers.h"
#include "models/symbol_modality.h"
#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"

namespace t2t {

class EvolvedTransformer : public T2TModel, public TensorFlowImport {
 public:
  // Throws t2t::Error for hyperparameters it cannot honour.
  EvolvedTransformer(const HParams& hparams, const FeatureInfo& features);

  torch::Tensor forward(const torch::Tensor& inputs, const torch::Tensor& targets) override;
  torch::Tensor forward_labelled(const torch::Tensor& inputs, const torch::Tensor& targets) override;
  std::unique_ptr<DecoderState> start_decoding(const torch::Tensor& inputs) override;
  torch::Tensor decode_step(DecoderState& state, const torch::Tensor& last_ids) override;
  void reorder_state(DecoderState& state, const torch::Tensor& index) override;

  // T2T's names: evolved_transformer_tf_names.cc.
  void load_tensorflow(const TFCheckpointReader& reader, int64_t target_space_id) override;
  std::vector<std::pair<std::string, torch::Tensor>> tensorflow_slots(
      const TFCheckpointReader& reader, int64_t target_space_id, const std::string& prefix,
      const std::string& suffix) const override;
  TFSources tensorflow_sources(const TFHas& has, int64_t target_space_id) const override;

  // inputs [batch, input_len] -> encoder output [batch, input_len, hidden]
  // and padding [batch, input_len] (bool, true at padding).
  std::pair<torch::Tensor, torch::Tensor> encode(const torch::Tensor& inputs);
  // Teacher-forced decoder: [batch, target_len, hidden], before the softmax.
  torch::Tensor decode(const torch::Tensor& targets, const torch::Tensor& encoder_output,
                       const torch::Tensor& encoder_padding);
  // [..., hidden] -> [..., target_vocab]
  torch::Tensor logits(const torch::Tensor& decoder_output) const;
  // encode() then decode(): [batch, target_len, hidden], before the softmax.
  torch::Tensor body(const torch::Tensor& inputs, const torch::Tensor& targets);

  const VocabularyMatrices& vocabulary() const { return matrices_; }
  int64_t hidden_size() const { return config_.hidden_size; }

 private:
  torch::Tensor embed(const torch::Tensor& weights, const torch::Tensor& ids) const;
  // x [batch, length, hidden] with the timing signal of positions
  // [start, start + length) added (unless pos=none).
  torch::Tensor add_timing(const torch::Tensor& x, int64_t start) const;

  TransformerLayerConfig config_;
  double embedding_scale_ = 1.0;
  double symbol_dropout_ = 0.0;
  bool timing_ = true;
  VocabularyMatrices matrices_;
  torch::Tensor target_space_;  // [hidden], or undefined
  torch::nn::ModuleList encoder_layers_;
  torch::nn::ModuleList decoder_layers_;
  std::vector<EvolvedEncoderLayer> encoder_;
  std::vector<EvolvedDecoderLayer> decoder_;
  PrePostProcess encoder_final_{nullptr};
  PrePostProcess decoder_final_{nullptr};
};

}  // namespace t2t
