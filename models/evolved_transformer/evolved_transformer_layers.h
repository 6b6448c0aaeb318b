// The cells of T2T's Evolved Transformer (So et al., 2019;
// tensor2tensor/models/evolved_transformer.py), built from the
// Transformer's pieces (models/transformer_layers.h) and two convolutions of
// their own. Module names follow T2T's variable scopes
// (evolved_transformer_tf_names.cc maps them).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "models/transformer_layers.h"

namespace t2t {

// T2T's SeparableConv1D: a depthwise convolution of `width` over each of
// `in` channels, then a pointwise [in -> out] product with a bias.
// Convolves [batch, length, in] without padding: `length - width + 1`
// positions come out (the callers pad as T2T does).
class SeparableConvImpl : public torch::nn::Module {
 public:
  SeparableConvImpl(int64_t in, int64_t out, int64_t width, const TransformerLayerConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor depthwise_;  // [in, 1, width]
  torch::Tensor pointwise_;  // [out, in, 1]
  torch::Tensor bias_;       // [out]
};
TORCH_MODULE(SeparableConv);

// T2T's Conv1D with a bias: [batch, length, in] -> [batch, length - width +
// 1, out], unpadded as SeparableConv.
class ConvImpl : public torch::nn::Module {
 public:
  ConvImpl(int64_t in, int64_t out, int64_t width, const TransformerLayerConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;  // [out, in, width]
  torch::Tensor bias_;    // [out]
};
TORCH_MODULE(Conv);

// One encoder cell: gated linear unit; a branched convolution (a 4x-wide
// ReLU layer beside a 3-wide convolution, then a 9-wide separable one);
// self-attention; a ReLU feed-forward network. Each block as T2T's
// layer_preprocess / layer_postprocess frame it.
class EvolvedEncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EvolvedEncoderLayerImpl(const TransformerLayerConfig& config, bool self_attention);
  // x [batch, length, hidden]; mask [batch, 1, 1, length] bool (true where
  // attention is allowed); nonpadding [batch, length, 1] (1 at tokens).
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& mask,
                        const torch::Tensor& nonpadding);

 private:
  double dropout_;
  PrePostProcess glu_pre_{nullptr}, glu_post_{nullptr};
  Dense glu_values_{nullptr}, glu_gates_{nullptr};
  PrePostProcess conv_pre_{nullptr}, conv_mid_pre_{nullptr}, conv_post_{nullptr};
  Dense conv_left_{nullptr};
  Conv conv_right_{nullptr};
  SeparableConv conv_separable_{nullptr};
  PrePostProcess self_attention_pre_{nullptr}, self_attention_post_{nullptr};
  MultiheadAttention self_attention_{nullptr};
  PrePostProcess dense_pre_{nullptr}, dense_post_{nullptr};
  Dense dense_1_{nullptr}, dense_2_{nullptr};
};
TORCH_MODULE(EvolvedEncoderLayer);

// What one decoder cell carries between decoding steps: two self-attention
// caches and two encoder-decoder ones (DecoderLayerCache's self_* for the
// wide self-attention and memory_* for the first attention to the encoder;
// `second` for the plain self-attention and the second one), and the last
// positions its causal convolutions read.
struct EvolvedLayerCache {
  DecoderLayerCache first, second;
  torch::Tensor branches;  // [batch, kBranchesContext, hidden]
  torch::Tensor final;     // [batch, kFinalContext, 2 * hidden]
};

// One decoder cell: a self-attention with twice the heads (at most 16)
// beside an attention to the encoder; a branched causal separable
// convolution (11 wide with ReLU beside 7 wide, then 7 wide); self-attention;
// a second attention to the encoder; a swish feed-forward network.
class EvolvedDecoderLayerImpl : public torch::nn::Module {
 public:
  // The earlier positions the causal convolutions read (T2T's left
  // paddings): 10 for the 11-wide branch (whose 7-wide neighbour reads the
  // last 6 of them), 6 for the last 7-wide convolution.
  static constexpr int64_t kBranchesContext = 10;
  static constexpr int64_t kNarrowContext = 6;
  static constexpr int64_t kFinalContext = 6;

  explicit EvolvedDecoderLayerImpl(const TransformerLayerConfig& config);

  // Teacher forcing. x [batch, target_length, hidden], memory
  // [batch, input_length, hidden], memory_mask [batch, 1, 1, input_length].
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& memory,
                        const torch::Tensor& memory_mask);

  // Fills the encoder-decoder keys and values and empties the rest.
  void start_decoding(const torch::Tensor& memory, EvolvedLayerCache& cache);
  // Position `length` alone: x [batch, 1, hidden]. The encoder-decoder
  // keys and values and memory_mask [batch / group, 1, 1, input_length]
  // have a row per `group` consecutive rows of x (AttentionCache::group).
  torch::Tensor step(torch::Tensor x, EvolvedLayerCache& cache, int64_t length,
                     const torch::Tensor& memory_mask, int64_t group = 1);

 private:
  // The two branches on pre-processed positions: [batch, length + 10,
  // hidden] (10 positions of left context) -> [batch, length, 2 * hidden],
  // normalised.
  torch::Tensor branches(const torch::Tensor& in);
  // The cell: teacher forcing without `cache` (x all target positions,
  // memory the encoder output), a step with it (x the position `length`,
  // memory unused: the cache holds its keys and values).
  torch::Tensor run(torch::Tensor x, const torch::Tensor& memory, const torch::Tensor& memory_mask,
                    EvolvedLayerCache* cache, int64_t length, int64_t group);

  int64_t hidden_;
  double dropout_;
  PrePostProcess attention_pre_{nullptr};
  MultiheadAttention wide_attention_{nullptr}, first_memory_attention_{nullptr};
  PrePostProcess conv_pre_{nullptr}, conv_mid_pre_{nullptr}, conv_post_{nullptr};
  SeparableConv conv_left_{nullptr}, conv_right_{nullptr}, conv_final_{nullptr};
  PrePostProcess self_attention_pre_{nullptr}, self_attention_post_{nullptr};
  MultiheadAttention self_attention_{nullptr};
  PrePostProcess memory_pre_{nullptr}, memory_post_{nullptr};
  MultiheadAttention second_memory_attention_{nullptr};
  PrePostProcess dense_pre_{nullptr}, dense_mid_pre_{nullptr}, dense_post_{nullptr};
  Dense dense_1_{nullptr}, dense_2_{nullptr};
};
TORCH_MODULE(EvolvedDecoderLayer);

}  // namespace t2t
