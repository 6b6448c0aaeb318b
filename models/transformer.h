// T2T's Transformer ("Attention is all you need"), registered as
// "transformer": the transformer_base_v1 (post-norm) to v3 (pre-norm) family,
// selected by hyperparameters alone.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "models/transformer_layers.h"
#include "t2t/core/hparams.h"
#include "t2t/kernels/int8_linear.h"
#include "t2t/model/inference_model.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"

namespace t2t {

class StaticDecodingArena;
struct StaticStepShape;
struct StaticTransformerState;

class Transformer : public T2TModel, public InferenceModel, public TensorFlowImport {
 public:
  // Throws t2t::Error for hyperparameters it cannot honour.
  Transformer(const HParams& hparams, const FeatureInfo& features);

  torch::Tensor forward(const torch::Tensor& inputs, const torch::Tensor& targets) override;
  // Projects only the labelled positions onto the vocabulary: the padding of
  // a batch (10-20% of its positions) costs no logits.
  torch::Tensor forward_labelled(const torch::Tensor& inputs, const torch::Tensor& targets) override;
  // The state start_decoding() returns differs from the generic one in two
  // ways that make beam search cheaper; decode_step() and reorder_state()
  // know both. Its encoder_output keeps the batch's rows but none of the
  // positions ([batch, 0, hidden]): the decoder layers hold the keys and
  // values they need. Its memory keys/values and their mask have one row per
  // `group` consecutive rows of the batch (the beams of one sentence), so
  // reordering beams copies only the self-attention caches.
  std::unique_ptr<DecoderState> start_decoding(const torch::Tensor& inputs) override;
  // Honours state.probe (not at static shapes, where it is refused).
  torch::Tensor decode_step(DecoderState& state, const torch::Tensor& last_ids) override;
  void reorder_state(DecoderState& state, const torch::Tensor& index) override;
  // Projects onto the chosen rows of the softmax matrix only (float32, int8
  // on t2t's kernels, bf16); not at static shapes.
  bool restrict_output(DecoderState& state, const torch::Tensor& ids) override;
  bool reports_attention() const override { return true; }
  std::pair<torch::Tensor, torch::Tensor> forward_labelled_with_attention(
      const torch::Tensor& inputs, const torch::Tensor& targets,
      const AttentionProbe& probe) override;
  // Static shapes and CUDA graphs: transformer_static_decoding.cc.
  void set_static_decoding(bool on, bool graphs) override;
  // The decoding steps captured into CUDA graphs so far.
  size_t decode_graphs() const;
  // Every dense layer of both stacks and the softmax projection; the
  // embeddings are looked up from int8 rows too (int8_embedding), so that
  // no float matrix of the vocabulary's size needs to stay in memory.
  void quantize_int8() override;
  // T2T's names: models/transformer_tf_names.h.
  void load_tensorflow(const TFCheckpointReader& reader, int64_t target_space_id) override;
  std::vector<std::pair<std::string, torch::Tensor>> tensorflow_slots(
      const TFCheckpointReader& reader, int64_t target_space_id, const std::string& prefix,
      const std::string& suffix) const override;
  TFSources tensorflow_sources(const TFHas& has, int64_t target_space_id) const override;
  bool quantized() const override { return softmax_int8_ != nullptr; }
  void release_float_weights() override;
  // The dense layers' under their weights' names, and each embedding and
  // softmax matrix once under its parameter's name (a shared one once).
  // load_int8_weights also takes what earlier int8 checkpoints hold: the
  // softmax projection under "softmax_int8", the embeddings float.
  Int8WeightMap int8_weights() const override;
  void load_int8_weights(Int8WeightMap weights) override;
  // Every float dense layer and the softmax projection (CpuLinearWeight).
  void pack_for_inference() override;

  // inputs [batch, input_len] -> encoder output [batch, input_len, hidden]
  // and padding [batch, input_len] (bool, true at padding).
  std::pair<torch::Tensor, torch::Tensor> encode(const torch::Tensor& inputs);

  // Teacher-forced decoder body: targets [batch, target_len] ->
  // [batch, target_len, hidden], before the softmax. With `probe`,
  // `attention` receives the probed encoder-decoder attention [batch,
  // target_len, input_len].
  torch::Tensor decode(const torch::Tensor& targets, const torch::Tensor& encoder_output,
                       const torch::Tensor& encoder_padding,
                       const AttentionProbe* probe = nullptr, torch::Tensor* attention = nullptr);

  // [..., hidden] -> [..., target_vocab]
  torch::Tensor logits(const torch::Tensor& decoder_output) const;

  // encode() then decode(): [batch, target_len, hidden], before the softmax.
  torch::Tensor body(const torch::Tensor& inputs, const torch::Tensor& targets);

  // The embedding and softmax matrices [vocab, hidden]; the same tensor when
  // shared.
  const torch::Tensor& input_embedding() const { return input_embedding_; }
  const torch::Tensor& target_embedding() const { return target_embedding_; }
  const torch::Tensor& softmax_weights() const { return softmax_weights_; }

  int64_t hidden_size() const { return config_.hidden_size; }

 private:
  // Every dense layer of both stacks, by its module name, in module order:
  // what int8 quantizes, saves and loads.
  std::vector<std::pair<std::string, DenseImpl*>> dense_layers() const;
  // ids [batch, length] -> [batch, length, hidden]: rows of `weights`
  // scaled by sqrt(hidden), zero for id 0; in int8 mode from its int8 rows.
  torch::Tensor embed(const torch::Tensor& weights, const torch::Tensor& ids) const;
  // The int8 form of an embedding matrix, or null outside int8 mode.
  const Int8Weights* int8_embedding(const torch::Tensor& weights) const;
  // The embedding and softmax matrices, each once, with their parameters'
  // names.
  std::vector<std::pair<std::string, torch::Tensor>> vocabulary_matrices() const;
  // T2T's symbol_dropout: ids replaced by 0 (padding) during training.
  torch::Tensor drop_symbols(const torch::Tensor& ids) const;
  // The decoder layer `probe` names; throws t2t::Error naming the layer or
  // head that does not exist.
  size_t probed_layer(const AttentionProbe& probe) const;
  // weights [batch, heads, length, input_len] -> [batch, length, input_len]:
  // the probed head, or their mean.
  torch::Tensor probed_heads(const torch::Tensor& weights, const AttentionProbe& probe) const;
  // Adds the timing signal for positions [start, start + length) of x.
  torch::Tensor add_timing(const torch::Tensor& x, int64_t start);
  // The timing signal [positions >= end, hidden] on x's device and in its
  // type.
  torch::Tensor timing_signal(int64_t end, const torch::Tensor& like);

  std::unique_ptr<DecoderState> start_static_decoding(const torch::Tensor& inputs);
  torch::Tensor static_decode_step(StaticTransformerState& state, const torch::Tensor& last_ids);
  void static_reorder_state(StaticTransformerState& state, const torch::Tensor& index);
  // The work of one step of `shape`, all of it on the arena's buffers:
  // what a graph captures.
  torch::Tensor static_step_body(const StaticStepShape& shape);

  TransformerLayerConfig config_;
  double embedding_scale_ = 1.0;
  double symbol_dropout_ = 0.0;
  bool timing_ = true;
  bool causal_ = true;

  torch::Tensor input_embedding_;
  torch::Tensor target_embedding_;
  torch::Tensor softmax_weights_;
  torch::Tensor target_space_;  // [hidden], or undefined
  std::shared_ptr<const Int8Linear> softmax_int8_;  // after quantize_int8()
  // In int8 mode: the embeddings' int8 rows (one object when shared).
  Int8Weights input_embedding_int8_, target_embedding_int8_;
  std::shared_ptr<const CpuLinearWeight> softmax_packed_;  // after pack_for_inference()
  torch::nn::ModuleList encoder_layers_;
  torch::nn::ModuleList decoder_layers_;
  std::vector<EncoderLayer> encoder_;
  std::vector<DecoderLayer> decoder_;
  PrePostProcess encoder_final_{nullptr};
  PrePostProcess decoder_final_{nullptr};
  torch::Tensor timing_signal_;  // [positions, hidden], grown on demand
  bool static_decoding_ = false, decode_graphs_ = false;
  std::shared_ptr<StaticDecodingArena> arena_;  // with static_decoding_
  std::mutex timing_mutex_;      // guards timing_signal_
};

}  // namespace t2t
