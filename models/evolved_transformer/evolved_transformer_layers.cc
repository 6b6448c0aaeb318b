#include "models/evolved_transformer/evolved_transformer_layers.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "t2t/kernels/depthwise_conv.h"
#include "t2t/kernels/dropout.h"

namespace t2t {
namespace {

// The config of a layer norm over `width` channels (T2T's layer_preprocess
// of a wider tensor normalises over its own last dimension).
TransformerLayerConfig with_width(TransformerLayerConfig c, int64_t width) {
  c.hidden_size = width;
  return c;
}

// T2T's number of heads of the wide decoder self-attention: twice the
// model's, at most 16 (but never fewer than the model's).
int64_t wide_heads(int64_t heads) { return std::max(std::min<int64_t>(heads * 2, 16), heads); }

// [batch, length, channels] with `before` and `after` zero positions added.
torch::Tensor pad_positions(const torch::Tensor& x, int64_t before, int64_t after) {
  return torch::constant_pad_nd(x, {0, 0, before, after}, 0);
}

// [batch, length, channels] with zero channels up to `width`.
torch::Tensor pad_channels(const torch::Tensor& x, int64_t width) {
  return torch::constant_pad_nd(x, {0, width - x.size(-1)}, 0);
}

torch::Tensor kernel(torch::nn::Module& m, const std::string& name, std::vector<int64_t> sizes,
                     const TransformerLayerConfig& c) {
  auto t = torch::empty(sizes);
  init_dense_weight(t, c.initializer, c.initializer_gain);
  return m.register_parameter(name, t);
}

torch::Tensor zero_bias(torch::nn::Module& m, int64_t size) {
  return m.register_parameter("bias", torch::zeros({size}));
}

}  // namespace

SeparableConvImpl::SeparableConvImpl(int64_t in, int64_t out, int64_t width,
                                     const TransformerLayerConfig& c) {
  depthwise_ = kernel(*this, "depthwise", {in, 1, width}, c);
  pointwise_ = kernel(*this, "pointwise", {out, in, 1}, c);
  bias_ = zero_bias(*this, out);
}

torch::Tensor SeparableConvImpl::forward(const torch::Tensor& x) {
  // Channels last throughout: the depthwise pass in t2t's kernel, the
  // pointwise one as a dense product.
  return torch::linear(depthwise_conv1d(x, depthwise_),
                       pointwise_.view({pointwise_.size(0), pointwise_.size(1)}), bias_);
}

ConvImpl::ConvImpl(int64_t in, int64_t out, int64_t width, const TransformerLayerConfig& c) {
  weight_ = kernel(*this, "weight", {out, in, width}, c);
  bias_ = zero_bias(*this, out);
}

torch::Tensor ConvImpl::forward(const torch::Tensor& x) {
  namespace F = torch::nn::functional;
  return F::conv1d(x.transpose(1, 2), weight_, F::Conv1dFuncOptions().bias(bias_)).transpose(1, 2);
}

EvolvedEncoderLayerImpl::EvolvedEncoderLayerImpl(const TransformerLayerConfig& c,
                                                 bool self_attention)
    : dropout_(c.prepostprocess_dropout) {
  const int64_t hidden = c.hidden_size, wide = 4 * hidden, narrow = hidden / 2;
  glu_pre_ = register_module("glu_pre", PrePostProcess(c.preprocess, c));
  glu_values_ = register_module("glu_values", make_dense(hidden, hidden, true, c));
  glu_gates_ = register_module("glu_gates", make_dense(hidden, hidden, true, c));
  glu_post_ = register_module("glu_post", PrePostProcess(c.postprocess, c));
  conv_pre_ = register_module("conv_pre", PrePostProcess(c.preprocess, c));
  conv_left_ = register_module("conv_left", make_dense(hidden, wide, true, c));
  conv_right_ = register_module("conv_right", Conv(hidden, narrow, 3, c));
  conv_mid_pre_ =
      register_module("conv_mid_pre", PrePostProcess(c.preprocess, with_width(c, wide)));
  conv_separable_ = register_module("conv_separable", SeparableConv(wide, narrow, 9, c));
  conv_post_ = register_module("conv_post", PrePostProcess(c.postprocess, c));
  if (self_attention) {
    self_attention_pre_ = register_module("self_attention_pre", PrePostProcess(c.preprocess, c));
    self_attention_ = register_module("self_attention", MultiheadAttention(c, false));
    self_attention_post_ =
        register_module("self_attention_post", PrePostProcess(c.postprocess, c));
  }
  dense_pre_ = register_module("dense_pre", PrePostProcess(c.preprocess, c));
  dense_1_ = register_module("dense_1", make_dense(hidden, wide, true, c));
  dense_2_ = register_module("dense_2", make_dense(wide, hidden, true, c));
  dense_post_ = register_module("dense_post", PrePostProcess(c.postprocess, c));
}

torch::Tensor EvolvedEncoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& mask,
                                               const torch::Tensor& nonpadding) {
  const bool training = is_training();
  auto h = glu_pre_(torch::Tensor(), x);
  h = glu_values_(h) * torch::sigmoid(glu_gates_(h));
  x = glu_post_(x, h);

  // The convolutions see zeros at padding, as T2T masks their inputs.
  h = conv_pre_(torch::Tensor(), x) * nonpadding;
  const auto left = t2t::dropout(torch::relu(conv_left_(h)), dropout_, training);
  const auto right =
      t2t::dropout(torch::relu(conv_right_(pad_positions(h, 1, 1))), dropout_, training);
  h = conv_mid_pre_(torch::Tensor(), left + pad_channels(right, left.size(-1))) * nonpadding;
  h = pad_channels(conv_separable_(pad_positions(h, 4, 4)), x.size(-1));
  x = conv_post_(x, h);

  if (self_attention_) {
    h = self_attention_(self_attention_pre_(torch::Tensor(), x), torch::Tensor(), mask);
    x = self_attention_post_(x, h);
  }

  h = t2t::dropout(torch::relu(dense_1_(dense_pre_(torch::Tensor(), x))), dropout_, training);
  return dense_post_(x, dense_2_(h));
}

EvolvedDecoderLayerImpl::EvolvedDecoderLayerImpl(const TransformerLayerConfig& c)
    : hidden_(c.hidden_size), dropout_(c.prepostprocess_dropout) {
  const int64_t hidden = c.hidden_size;
  TransformerLayerConfig wide_config = c;
  wide_config.num_heads = wide_heads(c.num_heads);
  attention_pre_ = register_module("attention_pre", PrePostProcess(c.preprocess, c));
  wide_attention_ = register_module("wide_attention", MultiheadAttention(wide_config, false));
  first_memory_attention_ =
      register_module("first_memory_attention", MultiheadAttention(c, true));
  conv_pre_ = register_module("conv_pre", PrePostProcess(c.preprocess, c));
  conv_left_ = register_module("conv_left", SeparableConv(hidden, 2 * hidden, 11, c));
  conv_right_ = register_module("conv_right", SeparableConv(hidden, hidden / 2, 7, c));
  conv_mid_pre_ =
      register_module("conv_mid_pre", PrePostProcess(c.preprocess, with_width(c, 2 * hidden)));
  conv_final_ = register_module("conv_final", SeparableConv(2 * hidden, hidden, 7, c));
  conv_post_ = register_module("conv_post", PrePostProcess(c.postprocess, c));
  self_attention_pre_ = register_module("self_attention_pre", PrePostProcess(c.preprocess, c));
  self_attention_ = register_module("self_attention", MultiheadAttention(c, false));
  self_attention_post_ = register_module("self_attention_post", PrePostProcess(c.postprocess, c));
  memory_pre_ = register_module("memory_pre", PrePostProcess(c.preprocess, c));
  second_memory_attention_ =
      register_module("second_memory_attention", MultiheadAttention(c, true));
  memory_post_ = register_module("memory_post", PrePostProcess(c.postprocess, c));
  dense_pre_ = register_module("dense_pre", PrePostProcess(c.preprocess, c));
  dense_1_ = register_module("dense_1", make_dense(hidden, 4 * hidden, true, c));
  dense_mid_pre_ =
      register_module("dense_mid_pre", PrePostProcess(c.preprocess, with_width(c, 4 * hidden)));
  dense_2_ = register_module("dense_2", make_dense(4 * hidden, hidden, true, c));
  dense_post_ = register_module("dense_post", PrePostProcess(c.postprocess, c));
}

torch::Tensor EvolvedDecoderLayerImpl::branches(const torch::Tensor& in) {
  const bool training = is_training();
  const int64_t length = in.size(1) - kBranchesContext;
  const auto left = t2t::dropout(torch::relu(conv_left_(in)), dropout_, training);
  const auto right = t2t::dropout(
      conv_right_(in.narrow(1, kBranchesContext - kNarrowContext, length + kNarrowContext)),
      dropout_, training);
  return conv_mid_pre_(torch::Tensor(), left + pad_channels(right, left.size(-1)));
}

torch::Tensor EvolvedDecoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& memory,
                                               const torch::Tensor& memory_mask) {
  return run(x, memory, memory_mask, nullptr, 0, 1);
}

void EvolvedDecoderLayerImpl::start_decoding(const torch::Tensor& memory,
                                             EvolvedLayerCache& cache) {
  std::tie(cache.first.memory_keys, cache.first.memory_values) =
      first_memory_attention_->memory_keys_values(memory);
  std::tie(cache.second.memory_keys, cache.second.memory_values) =
      second_memory_attention_->memory_keys_values(memory);
  cache.first.self_keys = cache.first.self_values = torch::Tensor();
  cache.second.self_keys = cache.second.self_values = torch::Tensor();
  // Zeros stand for the positions before the first, as T2T's padding does.
  const int64_t rows = memory.size(0);
  cache.branches = torch::zeros({rows, kBranchesContext, hidden_}, memory.options());
  cache.final = torch::zeros({rows, kFinalContext, 2 * hidden_}, memory.options());
}

torch::Tensor EvolvedDecoderLayerImpl::step(torch::Tensor x, EvolvedLayerCache& cache,
                                            int64_t length, const torch::Tensor& memory_mask,
                                            int64_t group) {
  return run(x, torch::Tensor(), memory_mask, &cache, length, group);
}

namespace {

// A step's convolution input: the cached context and the new position; the
// context then moves on by one.
torch::Tensor slide(torch::Tensor& context, const torch::Tensor& x) {
  const auto window = torch::cat({context, x}, 1);
  context = window.narrow(1, window.size(1) - context.size(1), context.size(1));
  return window;
}

}  // namespace

torch::Tensor EvolvedDecoderLayerImpl::run(torch::Tensor x, const torch::Tensor& memory,
                                           const torch::Tensor& memory_mask,
                                           EvolvedLayerCache* cache, int64_t length,
                                           int64_t group) {
  const bool training = is_training();
  // Teacher forcing masks the future of every position (T2T masks the
  // future only: padded targets come last, so no valid position ever sees
  // them, nor, through the causal convolutions, does any earlier one); a
  // step's one position attends to what its caches hold.
  const bool causal = cache == nullptr;
  std::optional<AttentionCache> wide, first, self, second;
  if (cache) {
    wide.emplace(AttentionCache{&cache->first.self_keys, &cache->first.self_values});
    wide->length = length;
    first.emplace(AttentionCache{&cache->first.memory_keys, &cache->first.memory_values});
    first->group = group;
    self.emplace(AttentionCache{&cache->second.self_keys, &cache->second.self_values});
    self->length = length;
    second.emplace(AttentionCache{&cache->second.memory_keys, &cache->second.memory_values});
    second->group = group;
  }
  const auto in = [](std::optional<AttentionCache>& c) { return c ? &*c : nullptr; };

  auto h = attention_pre_(torch::Tensor(), x);
  const auto left = wide_attention_(h, torch::Tensor(), torch::Tensor(), causal, in(wide));
  const auto right = first_memory_attention_(h, memory, memory_mask, false, in(first));
  // The two attentions join the residual without post-processing, as T2T's
  // cell does.
  x = x + t2t::dropout(left, dropout_, training) + t2t::dropout(right, dropout_, training);

  // The causal convolutions read zeros before the first position, as T2T
  // pads, and in a step the positions their caches hold.
  h = conv_pre_(torch::Tensor(), x);
  h = branches(cache ? slide(cache->branches, h) : pad_positions(h, kBranchesContext, 0));
  h = conv_final_(cache ? slide(cache->final, h) : pad_positions(h, kFinalContext, 0));
  x = conv_post_(x, h);

  h = self_attention_(self_attention_pre_(torch::Tensor(), x), torch::Tensor(), torch::Tensor(),
                      causal, in(self));
  x = self_attention_post_(x, h);
  h = second_memory_attention_(memory_pre_(torch::Tensor(), x), memory, memory_mask, false,
                               in(second));
  x = memory_post_(x, h);

  h = t2t::dropout(torch::silu(dense_1_(dense_pre_(torch::Tensor(), x))), dropout_, training);
  return dense_post_(x, dense_2_(dense_mid_pre_(torch::Tensor(), h)));
}

}  // namespace t2t
