#include "models/transformer_layers.h"

#include "models/relative_attention.h"
#include "t2t/kernels/cpu_layer_norm.h"
#include "t2t/kernels/decode_attention.h"
#include "t2t/kernels/dropout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/model/skip_init.h"

namespace t2t {
namespace {

const char* const kInitializers[] = {"uniform_unit_scaling", "xavier", "uniform", "orthogonal"};

int64_t int_or(const HParams& hp, const std::string& name, int64_t fallback) {
  return hp.has(name) ? hp.get_int(name) : fallback;
}

// "none" and "" mean no processing; anything else must be letters T2T knows.
std::string sequence_letters(const HParams& hp, const std::string& name, bool preprocess) {
  std::string sequence = hp.get_string(name);
  if (sequence == "none") return "";
  const std::string allowed = preprocess ? "nd" : "adnz";
  for (char c : sequence) {
    if (allowed.find(c) == std::string::npos) {
      throw Error("hparam " + name + "='" + sequence + "': letter '" + std::string(1, c) +
                  "' is not one of '" + allowed + "'" +
                  (preprocess ? " (a residual needs the sub-layer's output, so it belongs to "
                                "layer_postprocess_sequence)"
                              : "") +
                  "; use 'none' for no processing.");
    }
  }
  return sequence;
}

void check_positive(const std::string& name, int64_t value) {
  if (value <= 0)
    throw Error("hparam " + name + "=" + std::to_string(value) + " must be positive.");
}

void check_divisible(const std::string& name, int64_t value, int64_t num_heads) {
  if (value % num_heads != 0) {
    throw Error("hparam " + name + "=" + std::to_string(value) +
                " must be divisible by num_heads=" + std::to_string(num_heads) + ".");
  }
}

// Grows a self-attention cache [batch, heads, capacity, depth] so that it has
// room at `length`. A cache read through slots (decode_attention.h) may hold
// more slots than `like` has rows; they are all kept.
void reserve_cache(torch::Tensor& cache, const torch::Tensor& like, int64_t length) {
  if (!cache.defined())
    cache = torch::empty({like.size(0), like.size(1), 0, like.size(3)}, like.options());
  cache = with_room(cache, 2, length);
}

}  // namespace

Dense make_dense(int64_t in, int64_t out, bool bias, const TransformerLayerConfig& c) {
  Dense layer(torch::nn::LinearOptions(in, out).bias(bias));
  if (skip_initialization()) return layer;  // a checkpoint sets it
  torch::NoGradGuard no_grad;
  init_dense_weight(layer->weight, c.initializer, c.initializer_gain);
  if (bias) layer->bias.zero_();
  return layer;
}

torch::Tensor with_room(const torch::Tensor& t, int64_t dim, int64_t length) {
  if (length < t.size(dim)) return t;
  auto sizes = t.sizes().vec();
  sizes[dim] = std::max<int64_t>(kLeastRoom, 2 * sizes[dim]);
  auto grown = torch::empty(sizes, t.options());
  if (length > 0) grown.narrow(dim, 0, length).copy_(t.narrow(dim, 0, length));
  return grown;
}

// Up to how many queries per row and head a GPU attends with two matmuls
// (attend_few_queries): a decoding step has one per beam at most; an
// encoder input this short takes the same path.
constexpr int64_t kFewQueries = 16;

torch::Tensor attend_few_queries(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, const torch::Tensor& mask, double scale) {
  auto scores = torch::matmul(q, k.transpose(-2, -1)).mul_(scale);
  if (mask.defined())
    scores.masked_fill_(mask.logical_not(), -std::numeric_limits<float>::infinity());
  return torch::matmul(torch::softmax(scores, -1, torch::kFloat).to(v.scalar_type()), v);
}

TransformerLayerConfig TransformerLayerConfig::from_hparams(const HParams& hp) {
  TransformerLayerConfig c;
  c.hidden_size = hp.get_int("hidden_size");
  c.filter_size = hp.get_int("filter_size");
  c.num_heads = hp.get_int("num_heads");
  check_positive("hidden_size", c.hidden_size);
  check_positive("filter_size", c.filter_size);
  check_positive("num_heads", c.num_heads);
  const int64_t key_channels = int_or(hp, "attention_key_channels", 0);
  const int64_t value_channels = int_or(hp, "attention_value_channels", 0);
  c.key_channels = key_channels > 0 ? key_channels : c.hidden_size;
  c.value_channels = value_channels > 0 ? value_channels : c.hidden_size;
  check_divisible(key_channels > 0 ? "attention_key_channels" : "hidden_size", c.key_channels,
                  c.num_heads);
  check_divisible(value_channels > 0 ? "attention_value_channels" : "hidden_size", c.value_channels,
                  c.num_heads);
  const std::string attention_type =
      hp.has("self_attention_type") ? hp.get_string("self_attention_type") : "dot_product";
  if (attention_type == "dot_product_relative") {
    c.max_relative_position = int_or(hp, "max_relative_position", 0);
    if (c.max_relative_position <= 0)
      throw Error("hparam max_relative_position=" + std::to_string(c.max_relative_position) +
                  " must be positive with self_attention_type=dot_product_relative (T2T's "
                  "transformer_relative sets 20).");
    // T2T gives the value embeddings the keys' depth and adds them to the
    // values: the two depths must agree.
    if (c.key_channels != c.value_channels)
      throw Error("self_attention_type=dot_product_relative needs equal key and value depths; "
                  "got attention_key_channels " + std::to_string(c.key_channels) +
                  " and attention_value_channels " + std::to_string(c.value_channels) + ".");
  } else if (attention_type != "dot_product") {
    throw Error("hparam self_attention_type='" + attention_type +
                "' is not supported by the transformer; use dot_product or "
                "dot_product_relative.");
  }
  c.preprocess = sequence_letters(hp, "layer_preprocess_sequence", true);
  c.postprocess = sequence_letters(hp, "layer_postprocess_sequence", false);
  c.prepostprocess_dropout = hp.get_float("layer_prepostprocess_dropout");
  c.attention_dropout = hp.get_float("attention_dropout");
  c.relu_dropout = hp.get_float("relu_dropout");
  c.norm_type = hp.get_string("norm_type");
  if (c.norm_type != "layer" && c.norm_type != "none") {
    throw Error("hparam norm_type='" + c.norm_type +
                "' is not supported by the transformer; use 'layer' or 'none'.");
  }
  c.norm_epsilon = hp.get_float("norm_epsilon");
  c.initializer = hp.get_string("initializer");
  if (std::find(std::begin(kInitializers), std::end(kInitializers), c.initializer) ==
      std::end(kInitializers)) {
    throw Error("hparam initializer='" + c.initializer +
                "' is unknown; use uniform_unit_scaling, xavier, uniform or orthogonal.");
  }
  c.initializer_gain = hp.get_float("initializer_gain");
  return c;
}

int64_t stack_layers(const HParams& hp, const std::string& name) {
  const int64_t n = hp.has(name) ? hp.get_int(name) : 0;
  return n > 0 ? n : hp.get_int("num_hidden_layers");
}

bool uses_timing_signal(const HParams& hp, const std::string& what) {
  const std::string pos = hp.has("pos") ? hp.get_string("pos") : "timing";
  if (pos != "timing" && pos != "none")
    throw Error("hparam pos='" + pos + "' is not supported by the " + what +
                "; use timing or none.");
  return pos == "timing";
}

void init_dense_weight(torch::Tensor weight, const std::string& initializer, double gain) {
  if (skip_initialization()) return;  // a checkpoint sets it
  torch::NoGradGuard no_grad;
  // A convolution kernel [out, in, width...] counts its receptive field in
  // both fans, as TensorFlow's variance scaling does.
  const double receptive = weight.dim() > 2 ? static_cast<double>(weight[0][0].numel()) : 1.0;
  const double fan_out = static_cast<double>(weight.size(0)) * receptive;
  const double fan_in = static_cast<double>(weight.size(1)) * receptive;
  if (initializer == "uniform_unit_scaling") {
    const double limit = std::sqrt(3.0 * gain / ((fan_in + fan_out) / 2.0));
    weight.uniform_(-limit, limit);
  } else if (initializer == "xavier") {
    const double limit = std::sqrt(6.0 / (fan_in + fan_out));
    weight.uniform_(-limit, limit);
  } else if (initializer == "uniform") {
    weight.uniform_(-gain, gain);
  } else if (initializer == "orthogonal") {
    torch::nn::init::orthogonal_(weight, gain);
  } else {
    throw Error("unknown initializer '" + initializer + "'.");
  }
}

torch::Tensor timing_signal_1d(int64_t length, int64_t channels, int64_t start) {
  const int64_t num_timescales = channels / 2;
  // T2T divides by (num_timescales - 1), not by num_timescales as the paper's
  // formula would; the difference shows in every channel but the first.
  const double increment = std::log(1.0e4) / std::max<int64_t>(num_timescales - 1, 1);
  auto position = torch::arange(start, start + length, torch::kFloat).unsqueeze(1);
  auto inv_timescales =
      torch::exp(torch::arange(num_timescales, torch::kFloat) * static_cast<float>(-increment));
  auto scaled_time = position * inv_timescales.unsqueeze(0);
  auto signal = torch::cat({scaled_time.sin(), scaled_time.cos()}, 1);
  if (channels % 2 != 0) signal = torch::constant_pad_nd(signal, {0, 1}, 0);
  return signal;
}

torch::Tensor attention_mask_from_padding(const torch::Tensor& padding) {
  auto allowed = padding.logical_not().logical_or(padding.all(1, /*keepdim=*/true));
  return allowed.view({padding.size(0), 1, 1, padding.size(1)});
}

PrePostProcessImpl::PrePostProcessImpl(const std::string& sequence,
                                       const TransformerLayerConfig& config)
    : sequence_(sequence), dropout_(config.prepostprocess_dropout) {
  for (char c : sequence_) {
    if (c == 'n' && config.norm_type == "layer") {
      norms_.push_back(register_module(
          "layer_norm_" + std::to_string(norms_.size()),
          torch::nn::LayerNorm(
              torch::nn::LayerNormOptions({config.hidden_size}).eps(config.norm_epsilon))));
    } else if (c == 'z') {
      gates_.push_back(
          register_parameter("gate_" + std::to_string(gates_.size()), torch::zeros({})));
    }
  }
}

torch::Tensor PrePostProcessImpl::forward(const torch::Tensor& previous, torch::Tensor x) {
  size_t norm = 0, gate = 0;
  for (size_t i = 0; i < sequence_.size(); ++i) {
    switch (sequence_[i]) {
      case 'a':
        x = x + previous;
        break;
      case 'z':
        x = previous + gates_[gate++] * x;
        break;
      case 'n':
        if (!norms_.empty()) {
          auto& layer = norms_[norm++];
          // Inference on the CPU: the same arithmetic without LibTorch's
          // per-call cost (cpu_layer_norm.h).
          if (!is_training() && cpu_layer_norm_usable(x, layer->weight, layer->bias))
            x = cpu_layer_norm(x, layer->weight, layer->bias, layer->options.eps());
          else
            x = layer->forward(x);
        }
        break;
      case 'd':
        // "da", the usual postprocess, in one pass
        if (i + 1 < sequence_.size() && sequence_[i + 1] == 'a') {
          x = dropout_add(x, previous, dropout_, is_training());
          ++i;
        } else {
          x = t2t::dropout(x, dropout_, is_training());
        }
        break;
    }
  }
  return x;
}

MultiheadAttentionImpl::MultiheadAttentionImpl(const TransformerLayerConfig& c, bool memory)
    : memory_(memory),
      num_heads_(c.num_heads),
      key_channels_(c.key_channels),
      value_channels_(c.value_channels),
      dropout_(c.attention_dropout) {
  const int64_t k = key_channels_, v = value_channels_;
  // T2T has separate query, key and value kernels; each block of a fused
  // kernel is initialised as the kernel it stands for.
  if (memory) {
    q_ = register_module("q", make_dense(c.hidden_size, k, false, c));
    kv_ = register_module("kv", make_dense(c.hidden_size, k + v, false, c));
    init_dense_weight(kv_->weight.narrow(0, 0, k), c.initializer, c.initializer_gain);
    init_dense_weight(kv_->weight.narrow(0, k, v), c.initializer, c.initializer_gain);
  } else {
    qkv_ = register_module("qkv", make_dense(c.hidden_size, 2 * k + v, false, c));
    init_dense_weight(qkv_->weight.narrow(0, 0, k), c.initializer, c.initializer_gain);
    init_dense_weight(qkv_->weight.narrow(0, k, k), c.initializer, c.initializer_gain);
    init_dense_weight(qkv_->weight.narrow(0, 2 * k, v), c.initializer, c.initializer_gain);
  }
  output_ = register_module("output", make_dense(v, c.hidden_size, false, c));
  if (!memory && c.max_relative_position > 0) {
    max_relative_ = c.max_relative_position;
    // T2T's tables: [2 * max + 1, key depth per head], under its global
    // initializer like any other variable.
    const int64_t depth = k / num_heads_;
    const int64_t distances = 2 * max_relative_ + 1;
    relative_keys_ = register_parameter("relative_keys", torch::empty({distances, depth}));
    relative_values_ = register_parameter("relative_values", torch::empty({distances, depth}));
    init_dense_weight(relative_keys_, c.initializer, c.initializer_gain);
    init_dense_weight(relative_values_, c.initializer, c.initializer_gain);
  }
}

torch::Tensor MultiheadAttentionImpl::split_heads(const torch::Tensor& x) const {
  // [batch, length, heads * depth] -> [batch, heads, length, depth], a view:
  // the fused kernels take strided inputs.
  return x.view({x.size(0), x.size(1), num_heads_, -1}).transpose(1, 2);
}

// T2T scales queries by (key depth per head)^-0.5, which is also what
// scaled_dot_product_attention does; said explicitly so that it stays so.
double MultiheadAttentionImpl::query_scale() const {
  return 1.0 / std::sqrt(static_cast<double>(key_channels_ / num_heads_));
}

// Which of LibTorch's fused attention kernels a GPU runs decides much of a
// step's speed (a padding mask rules out flash attention, for one): said
// once per kind of call (masked or causal, training or not).
void MultiheadAttentionImpl::log_attention_backend(const torch::Tensor& q, const torch::Tensor& k,
                                                   const torch::Tensor& v,
                                                   const std::optional<torch::Tensor>& mask,
                                                   double dropout, bool causal) const {
  static std::mutex mutex;
  static std::set<std::tuple<bool, bool, bool, at::ScalarType>> said;
  const auto kind = std::make_tuple(mask.has_value(), causal, dropout > 0, q.scalar_type());
  std::lock_guard<std::mutex> lock(mutex);
  if (!said.insert(kind).second) return;
  static const char* const kNames[] = {"math (unfused)", "flash", "memory-efficient", "cuDNN"};
  const int64_t choice = at::_fused_sdp_choice(q, k, v, mask, dropout, causal, query_scale());
  spdlog::info("attention on {} ({}{}{}, {}): scaled_dot_product_attention runs its {} kernel",
               q.device().str(), mask ? "padding mask" : "no mask", causal ? ", causal" : "",
               dropout > 0 ? ", dropout" : "", c10::toString(q.scalar_type()),
               choice >= 0 && choice < 4 ? kNames[choice] : "other");
}

torch::Tensor MultiheadAttentionImpl::attend(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, const torch::Tensor& mask,
                                             bool causal) {
  std::optional<torch::Tensor> attn_mask;
  if (mask.defined()) attn_mask = mask;
  torch::Tensor out;
  if (is_training() && dropout_ > 0 && q.device().is_cpu()) {
    // The CPU's fused attention kernels have no dropout, so
    // scaled_dot_product_attention falls back to the same steps as below
    // but draws its mask with bernoulli_, several times the cost of
    // t2t::dropout's.
    auto scores = torch::matmul(q * query_scale(), k.transpose(-2, -1));
    if (causal) {
      const auto future =
          torch::ones({q.size(2), k.size(2)}, q.options().dtype(torch::kBool)).triu(1);
      scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    }
    if (mask.defined())
      scores = scores.masked_fill(mask.logical_not(), -std::numeric_limits<float>::infinity());
    out = torch::matmul(t2t::dropout(torch::softmax(scores, -1), dropout_, true), v);
  } else if (q.is_cuda() && !is_training() && !causal && q.size(2) <= kFewQueries) {
    out = attend_few_queries(q, k, v, mask, query_scale());
  } else {
    const double dropout = is_training() ? dropout_ : 0.0;
    if (q.is_cuda()) log_attention_backend(q, k, v, attn_mask, dropout, causal);
    out = torch::scaled_dot_product_attention(q, k, v, attn_mask, dropout, causal, query_scale());
  }
  // [batch, heads, length, depth] -> [batch, length, heads * depth]; the CPU
  // flash kernel already lays its output out that way, so this is a view.
  out = out.transpose(1, 2).reshape({q.size(0), q.size(2), value_channels_});
  return output_->forward(out);
}

torch::Tensor MultiheadAttentionImpl::attend_relative_positions(const torch::Tensor& q,
                                                                const torch::Tensor& k,
                                                                const torch::Tensor& v,
                                                                const torch::Tensor& buckets,
                                                                const torch::Tensor& allowed) {
  const auto out = attend_relative(q, k, v, relative_keys_, relative_values_, buckets, allowed,
                                   query_scale(), is_training() ? dropout_ : 0.0);
  return output_->forward(out.transpose(1, 2).reshape({q.size(0), q.size(2), value_channels_}));
}

torch::Tensor MultiheadAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                              const torch::Tensor& mask, bool causal,
                                              AttentionCache* cache) {
  if (!cache) {
    if (!memory_) return self_attention(x, mask, causal);
    const auto [keys, values] = memory_keys_values(memory);
    return memory_attention(x, keys, values, mask);
  }
  TORCH_CHECK(cache->keys && cache->values, "an attention cache without keys or values");
  if (cache->static_shapes)
    return memory_ ? static_memory_attention_step(x, *cache, mask)
                   : static_self_attention_step(x, *cache, mask);
  return memory_ ? memory_attention_step(x, *cache, mask) : self_attention_step(x, *cache);
}

torch::Tensor MultiheadAttentionImpl::self_attention(const torch::Tensor& x,
                                                     const torch::Tensor& mask, bool causal) {
  auto parts =
      qkv_->forward(x).split_with_sizes({key_channels_, key_channels_, value_channels_}, -1);
  if (max_relative_ > 0) {
    const int64_t length = x.size(1);
    auto allowed = mask;
    if (causal) {
      const auto past =
          torch::ones({length, length}, x.options().dtype(torch::kBool)).tril();
      allowed = allowed.defined() ? allowed.logical_and(past) : past;
    }
    return attend_relative_positions(
        split_heads(parts[0]), split_heads(parts[1]), split_heads(parts[2]),
        relative_buckets(length, length, 0, max_relative_, x.device()), allowed);
  }
  return attend(split_heads(parts[0]), split_heads(parts[1]), split_heads(parts[2]), mask, causal);
}

std::pair<torch::Tensor, torch::Tensor> MultiheadAttentionImpl::memory_keys_values(
    const torch::Tensor& memory) {
  auto parts = kv_->forward(memory).split_with_sizes({key_channels_, value_channels_}, -1);
  return {split_heads(parts[0]), split_heads(parts[1])};
}

torch::Tensor MultiheadAttentionImpl::memory_weights(const torch::Tensor& x,
                                                     const torch::Tensor& keys,
                                                     const torch::Tensor& mask, int64_t group) {
  const int64_t rows = x.size(0), length = x.size(1), memory_rows = keys.size(0);
  TORCH_CHECK(rows == memory_rows * group, "memory_weights: ", rows, " rows for ", memory_rows,
              " memory rows of ", group);
  // [rows, length, heads * depth] -> [memory rows, heads, group * length, depth]
  const auto q = q_->forward(x)
                     .to(torch::kFloat)
                     .view({memory_rows, group, length, num_heads_, -1})
                     .permute({0, 3, 1, 2, 4})
                     .reshape({memory_rows, num_heads_, group * length, -1});
  auto scores = torch::matmul(q * query_scale(), keys.to(torch::kFloat).transpose(-2, -1));
  if (mask.defined())
    scores = scores.masked_fill(mask.view({memory_rows, 1, 1, -1}).logical_not(),
                                -std::numeric_limits<float>::infinity());
  return torch::softmax(scores, -1)
      .view({memory_rows, num_heads_, group, length, -1})
      .permute({0, 2, 1, 3, 4})
      .reshape({rows, num_heads_, length, -1});
}

torch::Tensor MultiheadAttentionImpl::memory_attention(const torch::Tensor& x,
                                                       const torch::Tensor& keys,
                                                       const torch::Tensor& values,
                                                       const torch::Tensor& mask) {
  return attend(split_heads(q_->forward(x)), keys, values, mask, false);
}

torch::Tensor MultiheadAttentionImpl::memory_attention_step(const torch::Tensor& x,
                                                            const AttentionCache& cache,
                                                            const torch::Tensor& mask) {
  const torch::Tensor& keys = *cache.keys;
  const torch::Tensor& values = *cache.values;
  const int64_t group = cache.group;
  const int64_t rows = x.size(0);
  TORCH_CHECK(x.size(1) == 1 && rows == keys.size(0) * group,
              "memory_attention_step: ", rows, " rows of one position for ", keys.size(0),
              " memory rows of ", group);
  const auto projected = q_->forward(x);
  if (decode_attention_supported(projected) && !(is_training() && dropout_ > 0)) {
    const auto q = projected.view({rows, num_heads_, -1});
    const auto allowed = mask.view({keys.size(0), keys.size(2)});
    const auto out = attend_memory(q, keys, values, allowed, group, query_scale());
    return output_->forward(out).view({rows, 1, -1});
  }
  // [rows, 1, heads * depth] -> [memory rows, heads, group, depth]
  auto q = projected.view({keys.size(0), group, num_heads_, -1}).transpose(1, 2);
  return attend(q, keys, values, mask, false).view({rows, 1, -1});
}

torch::Tensor MultiheadAttentionImpl::self_attention_step(const torch::Tensor& x,
                                                          AttentionCache& cache) {
  torch::Tensor& keys = *cache.keys;
  torch::Tensor& values = *cache.values;
  const int64_t length = cache.length;
  const torch::Tensor& slots = cache.slots;
  auto parts =
      qkv_->forward(x).split_with_sizes({key_channels_, key_channels_, value_channels_}, -1);
  auto k = split_heads(parts[1]);
  auto v = split_heads(parts[2]);
  reserve_cache(keys, k, length);
  reserve_cache(values, v, length);
  const int64_t rows = x.size(0);
  TORCH_CHECK(rows <= keys.size(0), "self_attention_step: ", rows, " rows for a cache of ",
              keys.size(0), " slots");
  if (slots.defined()) {
    TORCH_CHECK(max_relative_ == 0, "self_attention_step: no slot tables with relative positions");
    store_position(keys, length, parts[1].view({rows, num_heads_, -1}));
    store_position(values, length, parts[2].view({rows, num_heads_, -1}));
    const auto q = parts[0].view({rows, num_heads_, -1});
    return output_->forward(attend_slots(q, keys, values, slots, length + 1, query_scale()))
        .view({rows, 1, -1});
  }
  keys.narrow(0, 0, rows).narrow(2, length, 1).copy_(k);
  values.narrow(0, 0, rows).narrow(2, length, 1).copy_(v);
  // Every cached position precedes the query: no mask needed.
  if (max_relative_ > 0)
    return attend_relative_positions(
        split_heads(parts[0]), keys.narrow(0, 0, rows).narrow(2, 0, length + 1),
        values.narrow(0, 0, rows).narrow(2, 0, length + 1),
        relative_buckets(1, length + 1, length, max_relative_, x.device()), torch::Tensor());
  return attend(split_heads(parts[0]), keys.narrow(2, 0, length + 1),
                values.narrow(2, 0, length + 1), torch::Tensor(), false);
}

torch::Tensor MultiheadAttentionImpl::static_self_attention_step(const torch::Tensor& x,
                                                                 const AttentionCache& cache,
                                                                 const torch::Tensor& mask) {
  const torch::Tensor& keys = *cache.keys;
  const torch::Tensor& values = *cache.values;
  const torch::Tensor& position = cache.position;
  const int64_t positions = cache.positions;
  auto parts =
      qkv_->forward(x).split_with_sizes({key_channels_, key_channels_, value_channels_}, -1);
  // index_copy_ takes the position from the device: a graph replays it at
  // whatever position the step is.
  keys.index_copy_(2, position, split_heads(parts[1]));
  values.index_copy_(2, position, split_heads(parts[2]));
  if (max_relative_ > 0)
    return attend_relative_positions(split_heads(parts[0]), keys.narrow(2, 0, positions),
                                     values.narrow(2, 0, positions),
                                     relative_buckets_at(position, positions, max_relative_),
                                     mask);
  const auto out = attend_few_queries(split_heads(parts[0]), keys.narrow(2, 0, positions),
                                      values.narrow(2, 0, positions), mask, query_scale());
  return output_->forward(out.transpose(1, 2).reshape({x.size(0), 1, value_channels_}));
}

torch::Tensor MultiheadAttentionImpl::static_memory_attention_step(const torch::Tensor& x,
                                                                   const AttentionCache& cache,
                                                                   const torch::Tensor& mask) {
  const torch::Tensor& keys = *cache.keys;
  const torch::Tensor& values = *cache.values;
  const int64_t group = cache.group;
  const int64_t rows = x.size(0);
  // [rows, 1, heads * depth] -> [memory rows, heads, group, depth]
  const auto q = q_->forward(x).view({keys.size(0), group, num_heads_, -1}).transpose(1, 2);
  const auto out = attend_few_queries(q, keys, values, mask, query_scale());
  return output_->forward(out.transpose(1, 2).reshape({keys.size(0), group, value_channels_}))
      .view({rows, 1, -1});
}

FeedForwardImpl::FeedForwardImpl(const TransformerLayerConfig& c) : dropout_(c.relu_dropout) {
  conv1_ = register_module("conv1", make_dense(c.hidden_size, c.filter_size, true, c));
  conv2_ = register_module("conv2", make_dense(c.filter_size, c.hidden_size, true, c));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  if (is_training() && dropout_ > 0)
    return conv2_->forward(relu_dropout(conv1_->forward(x), dropout_, true));
  return conv2_->forward(conv1_->forward_relu(x));
}

EncoderLayerImpl::EncoderLayerImpl(const TransformerLayerConfig& c) {
  pre_attention_ = register_module("self_attention_pre", PrePostProcess(c.preprocess, c));
  self_attention_ = register_module("self_attention", MultiheadAttention(c, false));
  post_attention_ = register_module("self_attention_post", PrePostProcess(c.postprocess, c));
  pre_ffn_ = register_module("ffn_pre", PrePostProcess(c.preprocess, c));
  ffn_ = register_module("ffn", FeedForward(c));
  post_ffn_ = register_module("ffn_post", PrePostProcess(c.postprocess, c));
}

torch::Tensor EncoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& mask) {
  auto y = self_attention_(pre_attention_(torch::Tensor(), x), torch::Tensor(), mask);
  x = post_attention_(x, y);
  y = ffn_(pre_ffn_(torch::Tensor(), x));
  return post_ffn_(x, y);
}

DecoderLayerImpl::DecoderLayerImpl(const TransformerLayerConfig& c, bool causal) : causal_(causal) {
  pre_self_ = register_module("self_attention_pre", PrePostProcess(c.preprocess, c));
  self_attention_ = register_module("self_attention", MultiheadAttention(c, false));
  post_self_ = register_module("self_attention_post", PrePostProcess(c.postprocess, c));
  pre_memory_ = register_module("encdec_attention_pre", PrePostProcess(c.preprocess, c));
  memory_attention_ = register_module("encdec_attention", MultiheadAttention(c, true));
  post_memory_ = register_module("encdec_attention_post", PrePostProcess(c.postprocess, c));
  pre_ffn_ = register_module("ffn_pre", PrePostProcess(c.preprocess, c));
  ffn_ = register_module("ffn", FeedForward(c));
  post_ffn_ = register_module("ffn_post", PrePostProcess(c.postprocess, c));
}

torch::Tensor DecoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& memory,
                                        const torch::Tensor& memory_mask, torch::Tensor* weights) {
  // T2T masks the future only: padded targets come last, so no valid
  // position ever sees them.
  auto y = self_attention_(pre_self_(torch::Tensor(), x), torch::Tensor(), torch::Tensor(),
                           causal_);
  x = post_self_(x, y);
  const auto query = pre_memory_(torch::Tensor(), x);
  if (weights)
    *weights = memory_attention_->memory_weights(
        query, memory_attention_->memory_keys_values(memory).first, memory_mask);
  y = memory_attention_(query, memory, memory_mask);
  x = post_memory_(x, y);
  y = ffn_(pre_ffn_(torch::Tensor(), x));
  return post_ffn_(x, y);
}

void DecoderLayerImpl::start_decoding(const torch::Tensor& memory, DecoderLayerCache& cache,
                                      bool bf16_caches) {
  std::tie(cache.memory_keys, cache.memory_values) = memory_attention_->memory_keys_values(memory);
  cache.self_keys = torch::Tensor();
  cache.self_values = torch::Tensor();
  if (!bf16_caches) return;  // the self-attention caches take the type of their first keys
  cache.memory_keys = cache.memory_keys.to(torch::kBFloat16);
  cache.memory_values = cache.memory_values.to(torch::kBFloat16);
  const auto options = cache.memory_keys.options();
  const int64_t rows = memory.size(0), heads = cache.memory_keys.size(1);
  cache.self_keys = torch::empty({rows, heads, 0, cache.memory_keys.size(3)}, options);
  cache.self_values = torch::empty({rows, heads, 0, cache.memory_values.size(3)}, options);
}

torch::Tensor DecoderLayerImpl::step(torch::Tensor x, DecoderLayerCache& cache, int64_t length,
                                     const torch::Tensor& memory_mask, int64_t group,
                                     const torch::Tensor& slots, torch::Tensor* weights) {
  AttentionCache self{&cache.self_keys, &cache.self_values};
  self.length = length;
  self.slots = slots;
  auto y = self_attention_(pre_self_(torch::Tensor(), x), torch::Tensor(), torch::Tensor(), false,
                           &self);
  x = post_self_(x, y);
  AttentionCache memory{&cache.memory_keys, &cache.memory_values};
  memory.group = group;
  const auto query = pre_memory_(torch::Tensor(), x);
  if (weights)
    *weights = memory_attention_->memory_weights(query, cache.memory_keys, memory_mask, group);
  y = memory_attention_(query, torch::Tensor(), memory_mask, false, &memory);
  x = post_memory_(x, y);
  y = ffn_(pre_ffn_(torch::Tensor(), x));
  return post_ffn_(x, y);
}

torch::Tensor DecoderLayerImpl::static_step(torch::Tensor x, const DecoderLayerCache& cache,
                                            const torch::Tensor& position,
                                            const torch::Tensor& self_mask, int64_t positions,
                                            const torch::Tensor& memory_mask, int64_t group) {
  // Views of the arena's buffers, which the calls write through in place.
  DecoderLayerCache views = cache;
  AttentionCache self{&views.self_keys, &views.self_values};
  self.static_shapes = true;
  self.position = position;
  self.positions = positions;
  auto y = self_attention_(pre_self_(torch::Tensor(), x), torch::Tensor(), self_mask, false, &self);
  x = post_self_(x, y);
  AttentionCache memory{&views.memory_keys, &views.memory_values};
  memory.static_shapes = true;
  memory.group = group;
  y = memory_attention_(pre_memory_(torch::Tensor(), x), torch::Tensor(), memory_mask, false,
                        &memory);
  x = post_memory_(x, y);
  y = ffn_(pre_ffn_(torch::Tensor(), x));
  return post_ffn_(x, y);
}

}  // namespace t2t
