// Building blocks of T2T's Transformer (tensor2tensor/models/transformer.py,
// layers/common_attention.py, layers/common_layers.py): the timing signal,
// the letter-coded layer pre/post-processing, bias-free multi-head attention
// on LibTorch's fused scaled_dot_product_attention (or with relative
// positions, relative_attention.h), the ReLU feed-forward network, and
// encoder and decoder layers.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "models/dense.h"
#include "t2t/core/hparams.h"
#include "t2t/model/t2t_model.h"

namespace t2t {

// The hyperparameters one layer needs, read and checked once.
struct TransformerLayerConfig {
  int64_t hidden_size = 0;
  int64_t filter_size = 0;
  int64_t num_heads = 0;
  int64_t key_channels = 0;    // total over heads
  int64_t value_channels = 0;  // total over heads
  // Self-attention with relative positions (T2T's self_attention_type
  // dot_product_relative) clipped at this distance; 0: plain dot products.
  int64_t max_relative_position = 0;
  std::string preprocess;      // letters of layer_preprocess_sequence ("" for "none")
  std::string postprocess;     // letters of layer_postprocess_sequence
  double prepostprocess_dropout = 0.0;
  double attention_dropout = 0.0;
  double relu_dropout = 0.0;
  std::string norm_type = "layer";
  double norm_epsilon = 1e-6;
  std::string initializer = "uniform_unit_scaling";
  double initializer_gain = 1.0;

  // Throws t2t::Error naming the hyperparameter at fault.
  static TransformerLayerConfig from_hparams(const HParams& hp);
};

// T2T's stack depth: hparam `name` (num_encoder_layers or
// num_decoder_layers) when positive, else num_hidden_layers.
int64_t stack_layers(const HParams& hp, const std::string& name);

// Whether the inputs get T2T's timing signal: hparam pos is "timing" (or
// absent); "none" leaves positions to relative attention. Throws t2t::Error
// naming `what` for other values.
bool uses_timing_signal(const HParams& hp, const std::string& what);

// Initialises `weight`, one dense kernel of a torch [out, in] matrix, with
// T2T's global initializer. uniform_unit_scaling is variance scaling with
// fan_avg: U(-l, l), l = sqrt(3 * gain / ((in + out) / 2)). A convolution
// kernel [out, in, width] counts in * width and out * width.
void init_dense_weight(torch::Tensor weight, const std::string& initializer, double gain);

// A dense layer [in -> out] drawn with the config's initializer, its bias
// (when it has one) zero, as T2T's dense layers start.
Dense make_dense(int64_t in, int64_t out, bool bias, const TransformerLayerConfig& config);

// T2T's get_timing_signal_1d for positions [start, start + length):
// channel i < C/2 holds sin(p * r_i), channel C/2 + i holds cos(p * r_i),
// r_i = exp(-i * ln(1e4) / max(C/2 - 1, 1)); an odd last channel is zero.
// Returns [length, channels] float32.
torch::Tensor timing_signal_1d(int64_t length, int64_t channels, int64_t start = 0);

// The positions a decoding cache starts with: most sentences of a batch
// are done within them, and the caches of a batch's first steps hold all of
// its beams (base's bfloat16 self-attention caches: 12 KB a position and
// beam, 12 MB at this room for 32 sentences of 4 beams). With 16, base
// int8's peak RSS over the Tatoeba dev set was 10-17 MB higher.
constexpr int64_t kLeastRoom = 8;

// `t` with room at index `length` of dimension `dim`: itself when there is,
// else a copy of its first `length` entries there in a buffer twice as long
// (at least kLeastRoom), so that growing one step at a time copies O(1) per
// step.
torch::Tensor with_room(const torch::Tensor& t, int64_t dim, int64_t length);

// Attention of a decoding step, where each row and head has a few queries
// (one in self-attention; one per beam when the beams of a sentence share
// its encoder-decoder keys), as two batched matmuls and a float32 softmax:
// q [batch, heads, queries, depth], k and v [batch, heads, keys, depth],
// mask broadcastable to [batch, heads, queries, keys] (true where allowed)
// or undefined. Used on GPUs, where scaled_dot_product_attention would pick
// a kernel made for long sequences and, in its cuDNN kernel, build an
// execution plan for each new shape, which decoding brings at every step.
torch::Tensor attend_few_queries(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, const torch::Tensor& mask, double scale);

// A boolean key mask for scaled_dot_product_attention from padding
// [batch, len] (true at padding): [batch, 1, 1, len], true where attention is
// allowed. A row of padding only attends everywhere, as T2T's -1e9 bias
// does, instead of producing NaNs.
torch::Tensor attention_mask_from_padding(const torch::Tensor& padding);

// T2T's layer_prepostprocess: applies its letters in order: a (add the
// sub-layer's input), z (add it with a learned, zero-initialised gate on
// the output), n (normalise), d (dropout).
class PrePostProcessImpl : public torch::nn::Module {
 public:
  PrePostProcessImpl(const std::string& sequence, const TransformerLayerConfig& config);
  // previous: the sub-layer's input (may be undefined when the sequence has
  // no a or z); x: [batch, length, hidden].
  torch::Tensor forward(const torch::Tensor& previous, torch::Tensor x);
  bool empty() const { return sequence_.empty(); }

 private:
  std::string sequence_;
  double dropout_;
  std::vector<torch::nn::LayerNorm> norms_;  // one per n (none for norm_type none)
  std::vector<torch::Tensor> gates_;         // one per z
};
TORCH_MODULE(PrePostProcess);

// A decoding step's cache of one attention layer, given to
// MultiheadAttention::forward. Self-attention writes the step's key and
// value into it and attends to what it holds; memory attention reads the
// keys and values memory_keys_values() made once per sentence.
struct AttentionCache {
  // Self: [slots, heads, capacity, depth], grown in place when full (dynamic
  // shapes). Memory: [rows / group, heads, memory_length, depth].
  torch::Tensor* keys = nullptr;
  torch::Tensor* values = nullptr;
  // Self, dynamic shapes: positions already cached; the step writes at it.
  int64_t length = 0;
  // Self, dynamic shapes, CPU float32 (decode_attention.h): row r writes slot
  // r and reads position p from slot slots[r][p], so the caches may hold
  // more slots than rows and need no reordering. Undefined: row r is slot r.
  torch::Tensor slots;
  // Memory: rows of x that share a row of keys and values (the beams of one
  // sentence); they attend as `group` queries of that row, so the memory is
  // neither copied nor read once per beam.
  int64_t group = 1;
  // Static shapes (static_decoding.h): every tensor a view of buffers at
  // fixed addresses and no size read from the device. Self-attention writes
  // at `position` ([1] int64, on the device) and reads the first
  // `positions` positions where the call's mask allows.
  bool static_shapes = false;
  torch::Tensor position;
  int64_t positions = 0;
};

class MultiheadAttentionImpl : public torch::nn::Module {
 public:
  // memory: keys and values come from another sequence (the encoder output)
  // rather than from the queries' own.
  MultiheadAttentionImpl(const TransformerLayerConfig& config, bool memory);

  // The one attention call. x [rows, length, hidden] -> [rows, length,
  // hidden]. mask: bool, where attention is allowed, broadcastable to
  // [rows, heads, length, keys] (memory steps: [rows / group, 1, 1,
  // memory_length]), or undefined. Without a cache, self-attention attends
  // over x itself (causal: position t sees [0, t]) and memory attention over
  // memory [rows, memory_length, hidden]. With one, x is one position per
  // row and the keys and values come from the cache (see AttentionCache);
  // memory is then unused.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory,
                        const torch::Tensor& mask, bool causal = false,
                        AttentionCache* cache = nullptr);

  // memory [batch, memory_length, hidden] -> keys, values
  // [batch, heads, memory_length, depth]: what a memory cache holds.
  std::pair<torch::Tensor, torch::Tensor> memory_keys_values(const torch::Tensor& memory);
  // The attention weights memory attention gives queries x [rows, length,
  // hidden] over keys [rows / group, heads, memory_length, depth] (mask as
  // forward()'s), computed apart in float32 so that the output's kernels stay
  // what they are: [rows, heads, length, memory_length]. For word alignments
  // and guided alignment (differentiable).
  torch::Tensor memory_weights(const torch::Tensor& x, const torch::Tensor& keys,
                               const torch::Tensor& mask, int64_t group = 1);

 private:
  torch::Tensor self_attention(const torch::Tensor& x, const torch::Tensor& mask, bool causal);
  torch::Tensor memory_attention(const torch::Tensor& x, const torch::Tensor& keys,
                                 const torch::Tensor& values, const torch::Tensor& mask);
  torch::Tensor self_attention_step(const torch::Tensor& x, AttentionCache& cache);
  torch::Tensor memory_attention_step(const torch::Tensor& x, const AttentionCache& cache,
                                      const torch::Tensor& mask);
  torch::Tensor static_self_attention_step(const torch::Tensor& x, const AttentionCache& cache,
                                           const torch::Tensor& mask);
  torch::Tensor static_memory_attention_step(const torch::Tensor& x, const AttentionCache& cache,
                                             const torch::Tensor& mask);
  torch::Tensor split_heads(const torch::Tensor& x) const;
  double query_scale() const;
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& mask, bool causal);
  // Self-attention with relative positions: buckets [queries, keys]
  // (relative_attention.h), allowed as attend_relative takes it.
  torch::Tensor attend_relative_positions(const torch::Tensor& q, const torch::Tensor& k,
                                          const torch::Tensor& v, const torch::Tensor& buckets,
                                          const torch::Tensor& allowed);
  void log_attention_backend(const torch::Tensor& q, const torch::Tensor& k,
                             const torch::Tensor& v, const std::optional<torch::Tensor>& mask,
                             double dropout, bool causal) const;

  bool memory_;
  int64_t num_heads_;
  int64_t key_channels_;
  int64_t value_channels_;
  double dropout_;
  // Self-attention projects queries, keys and values with one matmul,
  // memory attention queries alone and keys with values.
  Dense qkv_{nullptr};
  Dense q_{nullptr};
  Dense kv_{nullptr};
  Dense output_{nullptr};
  // Relative positions (self-attention only): 0 and undefined without.
  int64_t max_relative_ = 0;
  torch::Tensor relative_keys_, relative_values_;  // [2 * max + 1, depth]
};
TORCH_MODULE(MultiheadAttention);

// T2T's dense_relu_dense: relu(x W1 + b1), dropout, W2 + b2.
class FeedForwardImpl : public torch::nn::Module {
 public:
  explicit FeedForwardImpl(const TransformerLayerConfig& config);
  torch::Tensor forward(const torch::Tensor& x);  // [batch, length, hidden]

 private:
  double dropout_;
  Dense conv1_{nullptr};
  Dense conv2_{nullptr};
};
TORCH_MODULE(FeedForward);

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const TransformerLayerConfig& config);
  // x [batch, length, hidden]; mask [batch, 1, 1, length] bool.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& mask);

 private:
  PrePostProcess pre_attention_{nullptr}, post_attention_{nullptr};
  PrePostProcess pre_ffn_{nullptr}, post_ffn_{nullptr};
  MultiheadAttention self_attention_{nullptr};
  FeedForward ffn_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  DecoderLayerImpl(const TransformerLayerConfig& config, bool causal);

  // Teacher forcing. x [batch, target_length, hidden], memory
  // [batch, input_length, hidden], memory_mask [batch, 1, 1, input_length].
  // `weights`, when given, receives the encoder-decoder attention weights
  // [batch, heads, target_length, input_length] (memory_weights()).
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& memory,
                        const torch::Tensor& memory_mask, torch::Tensor* weights = nullptr);

  // Fills cache.memory_keys / memory_values from the encoder output.
  // bf16_caches: the caches in bfloat16 (attend_slots and attend_memory
  // read them), for a model whose products are int8 anyway.
  void start_decoding(const torch::Tensor& memory, DecoderLayerCache& cache,
                      bool bf16_caches = false);

  // Position `length` alone: x [batch, 1, hidden]. The cache's memory
  // keys/values and memory_mask [batch / group, 1, 1, input_length] have one
  // row per `group` consecutive rows of x (see AttentionCache).
  // `slots`: see AttentionCache. `weights`, when given, receives the step's
  // encoder-decoder attention weights [batch, heads, 1, input_length].
  torch::Tensor step(torch::Tensor x, DecoderLayerCache& cache, int64_t length,
                     const torch::Tensor& memory_mask, int64_t group = 1,
                     const torch::Tensor& slots = torch::Tensor(),
                     torch::Tensor* weights = nullptr);

  // step() at static shapes (static_decoding.h): `cache` holds views of the
  // arena's buffers; self_mask [1, 1, 1, positions] and memory_mask are the
  // two attention calls' masks.
  torch::Tensor static_step(torch::Tensor x, const DecoderLayerCache& cache,
                            const torch::Tensor& position, const torch::Tensor& self_mask,
                            int64_t positions, const torch::Tensor& memory_mask, int64_t group);

 private:
  bool causal_;
  PrePostProcess pre_self_{nullptr}, post_self_{nullptr};
  PrePostProcess pre_memory_{nullptr}, post_memory_{nullptr};
  PrePostProcess pre_ffn_{nullptr}, post_ffn_{nullptr};
  MultiheadAttention self_attention_{nullptr};
  MultiheadAttention memory_attention_{nullptr};
  FeedForward ffn_{nullptr};
};
TORCH_MODULE(DecoderLayer);

}  // namespace t2t
