#include "models/transformer.h"

#include "models/symbol_modality.h"
#include "models/transformer_static_decoding.h"
#include "t2t/kernels/decode_attention.h"
#include "t2t/kernels/dropout.h"
#include "t2t/kernels/onednn_linear.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "t2t/model/honoured_hparams.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/model/model_registry.h"

namespace t2t {
namespace {

bool bool_or(const HParams& hp, const std::string& name, bool fallback) {
  return hp.has(name) ? hp.get_bool(name) : fallback;
}

void require(const HParams& hp, const std::string& name, const std::string& supported) {
  if (!hp.has(name)) return;
  const std::string value = hvalue_to_string(hp.value(name));
  if (value != supported) {
    throw Error("hparam " + name + "=" + value + " is not supported by the transformer; use " +
                supported + ".");
  }
}

// The decoding state of start_decoding(): the generic one, with the memory
// of the decoder layers shared by groups of consecutive rows.
struct TransformerDecoderState : DecoderState {
  int64_t group = 1;          // rows per row of the memory keys/values
  torch::Tensor memory_mask;  // [batch / group, 1, 1, input_len] bool
  // CPU float32 in eval mode (decode_attention.h): the self-attention caches
  // hold slots, at least as many as rows, and row r's position p is in slot
  // slots[r][p]. Reordering beams reorders this table only.
  bool use_slots = false;
  torch::Tensor slots;  // [batch, capacity] int64
  // After restrict_output(): the softmax projection over the given ids only,
  // in the form logits() would use for the whole one.
  struct Softmax {
    torch::Tensor weight;                           // [ids, hidden]
    std::shared_ptr<const CpuLinearWeight> packed;  // where the whole one is packed
    std::shared_ptr<const Int8Linear> int8;         // where the whole one is int8
  };
  std::shared_ptr<const Softmax> softmax;
};

// Row r of the result holds, at each position p < length, what slot
// slots[r][p] of `cache` [num_slots, heads, capacity, depth] holds there;
// the result has room for `capacity` positions.
torch::Tensor gather_slots(const torch::Tensor& cache, const torch::Tensor& slots, int64_t length,
                           int64_t capacity) {
  TORCH_CHECK(cache.device().is_cpu() && slots.device().is_cpu(),
              "gather_slots: slot-table caches are the CPU decoder's");
  const int64_t rows = slots.size(0), heads = cache.size(1), depth = cache.size(3);
  auto out = torch::empty({rows, heads, capacity, depth}, cache.options());
  if (length == 0) return out;
  // One copy of `depth` elements per (row, head, position), of whatever
  // type the cache holds: the general indexing kernels cost several times
  // that at these sizes.
  const auto source = cache.contiguous();
  const auto table = slots.contiguous();
  const int64_t* slot = table.data_ptr<int64_t>();
  const int64_t table_row = table.size(1), old_capacity = source.size(2);
  const size_t bytes = static_cast<size_t>(depth) * source.element_size();
  const char* from = static_cast<const char*>(source.data_ptr());
  char* to = static_cast<char*>(out.data_ptr());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t p = 0; p < length; ++p)
        std::memcpy(to + ((r * heads + h) * capacity + p) * bytes,
                    from + ((slot[r * table_row + p] * heads + h) * old_capacity + p) * bytes,
                    bytes);
  return out;
}

// Lays the caches out one slot per row again (slots[r][p] = r), with room
// for `capacity` positions.
void compact_slots(TransformerDecoderState& state, int64_t capacity) {
  for (auto& layer : state.layers) {
    if (!layer.self_keys.defined()) continue;
    layer.self_keys = gather_slots(layer.self_keys, state.slots, state.length, capacity);
    layer.self_values = gather_slots(layer.self_values, state.slots, state.length, capacity);
  }
  const int64_t rows = state.slots.size(0);
  state.slots.copy_(torch::arange(rows, state.slots.options()).unsqueeze(1).expand_as(state.slots));
}

// Before a step: when the caches are full, they grow by laying out anew
// the rows still decoded only. Growing them as they are would copy, and
// keep, the slots of every beam of every sentence the batch started with,
// and by the time a batch's caches fill most of its sentences are done.
void make_room(TransformerDecoderState& state) {
  const auto& first = state.layers.empty() ? torch::Tensor() : state.layers[0].self_keys;
  if (!first.defined() || state.length < first.size(2)) return;
  compact_slots(state, std::max<int64_t>(kLeastRoom, 2 * first.size(2)));
}

}  // namespace

Transformer::Transformer(const HParams& hp, const FeatureInfo& features)
    : config_(TransformerLayerConfig::from_hparams(hp)) {
  require(hp, "ffn_layer", "dense_relu_dense");
  // T2T's hparams that the transformer carries but does not read as T2T
  // does: refused, or said at start-up when asked for.
  for (const std::string& note : check_honoured_hparams(hp, "transformer"))
    spdlog::info("{}", note);
  timing_ = uses_timing_signal(hp, "transformer");
  const int64_t hidden = config_.hidden_size;
  embedding_scale_ = embedding_scale(hp, hidden, "transformer");
  symbol_dropout_ = hp.has("symbol_dropout") ? hp.get_float("symbol_dropout") : 0.0;
  causal_ = bool_or(hp, "causal_decoder_self_attention", true);

  const VocabularyMatrices matrices =
      register_vocabulary_matrices(*this, hp, features, hidden, "transformer");
  input_embedding_ = matrices.input;
  target_embedding_ = matrices.target;
  softmax_weights_ = matrices.softmax;
  target_space_ =
      register_target_space(*this, hp, hidden, config_.initializer, config_.initializer_gain);

  const int64_t num_encoder_layers = stack_layers(hp, "num_encoder_layers");
  const int64_t num_decoder_layers = stack_layers(hp, "num_decoder_layers");
  encoder_layers_ = register_module("encoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < num_encoder_layers; ++i) {
    encoder_.push_back(EncoderLayer(config_));
    encoder_layers_->push_back(encoder_.back());
  }
  // Pre-norm stacks end with one more normalisation (T2T applies
  // layer_preprocess to the stack's output); for post-norm it is empty.
  encoder_final_ = register_module("encoder_final", PrePostProcess(config_.preprocess, config_));
  decoder_layers_ = register_module("decoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < num_decoder_layers; ++i) {
    decoder_.push_back(DecoderLayer(config_, causal_));
    decoder_layers_->push_back(decoder_.back());
  }
  decoder_final_ = register_module("decoder_final", PrePostProcess(config_.preprocess, config_));
}

torch::Tensor Transformer::embed(const torch::Tensor& weights, const torch::Tensor& ids) const {
  if (const Int8Weights* int8 = int8_embedding(weights)) {
    // values x the row's scale, as an int8 product reads its weight.
    auto scale = ids.ne(0).to(weights.scalar_type());
    if (embedding_scale_ != 1.0) scale.mul_(embedding_scale_);
    const auto flat = ids.reshape({-1});
    auto sizes = ids.sizes().vec();
    sizes.push_back(int8->values.size(1));
    const auto rows = int8->values.index_select(0, flat).to(torch::kFloat) *
                      int8->scales.reshape({-1}).index_select(0, flat).unsqueeze(1);
    return rows.view(sizes) * scale.unsqueeze(-1);
  }
  return embed_symbols(weights, ids, embedding_scale_);
}

const Int8Weights* Transformer::int8_embedding(const torch::Tensor& weights) const {
  if (weights.is_same(input_embedding_) && input_embedding_int8_.values.defined())
    return &input_embedding_int8_;
  if (weights.is_same(target_embedding_) && target_embedding_int8_.values.defined())
    return &target_embedding_int8_;
  return nullptr;
}

std::vector<std::pair<std::string, torch::Tensor>> Transformer::vocabulary_matrices() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : named_parameters(/*recurse=*/false)) {
    const auto& t = p.value();
    if (t.is_same(input_embedding_) || t.is_same(target_embedding_) || t.is_same(softmax_weights_))
      out.emplace_back(p.key(), t);
  }
  return out;
}

torch::Tensor Transformer::drop_symbols(const torch::Tensor& ids) const {
  return t2t::drop_symbols(ids, symbol_dropout_, is_training());
}

torch::Tensor Transformer::timing_signal(int64_t end, const torch::Tensor& like) {
  // Batches may be decoded on several threads at once.
  std::lock_guard<std::mutex> lock(timing_mutex_);
  if (!timing_signal_.defined() || timing_signal_.size(0) < end ||
      timing_signal_.device() != like.device() ||
      timing_signal_.scalar_type() != like.scalar_type()) {
    const int64_t cached = timing_signal_.defined() ? timing_signal_.size(0) : 0;
    const int64_t positions = std::max<int64_t>({end, 2 * cached, 256});
    // In the activations' type: a bf16 model (--quantize=bf16) adds it
    // in bf16 rather than turn its activations into float32.
    timing_signal_ =
        timing_signal_1d(positions, config_.hidden_size).to(like.device(), like.scalar_type());
  }
  return timing_signal_;
}

torch::Tensor Transformer::add_timing(const torch::Tensor& x, int64_t start) {
  if (!timing_) return x;
  return x + timing_signal(start + x.size(1), x).narrow(0, start, x.size(1));
}

std::pair<torch::Tensor, torch::Tensor> Transformer::encode(const torch::Tensor& inputs) {
  TORCH_CHECK(inputs.dim() == 2, "inputs must be [batch, input_len], got ", inputs.sizes());
  auto ids = drop_symbols(inputs);
  auto padding = ids.eq(0);
  auto x = embed(input_embedding_, ids);
  if (target_space_.defined()) x = x + target_space_;
  x = t2t::dropout(add_timing(x, 0), config_.prepostprocess_dropout, is_training());
  const auto mask = attention_mask_from_padding(padding);
  for (auto& layer : encoder_) x = layer(x, mask);
  return {encoder_final_(torch::Tensor(), x), padding};
}

size_t Transformer::probed_layer(const AttentionProbe& probe) const {
  const auto layers = static_cast<int64_t>(decoder_.size());
  const int64_t layer = probe.layer < 0 ? layers + probe.layer : probe.layer;
  if (layer < 0 || layer >= layers)
    throw Error("alignment layer " + std::to_string(probe.layer) + " does not exist: the decoder has " +
                std::to_string(layers) + " layers (0.." + std::to_string(layers - 1) +
                ", or -1 for the last)");
  if (probe.head < -1 || probe.head >= config_.num_heads)
    throw Error("alignment head " + std::to_string(probe.head) + " does not exist: the layers have " +
                std::to_string(config_.num_heads) + " heads (0.." +
                std::to_string(config_.num_heads - 1) + ", or -1 for their mean)");
  return static_cast<size_t>(layer);
}

torch::Tensor Transformer::probed_heads(const torch::Tensor& weights,
                                        const AttentionProbe& probe) const {
  return probe.head < 0 ? weights.mean(1) : weights.select(1, probe.head);
}

torch::Tensor Transformer::decode(const torch::Tensor& targets, const torch::Tensor& encoder_output,
                                  const torch::Tensor& encoder_padding,
                                  const AttentionProbe* probe, torch::Tensor* attention) {
  TORCH_CHECK(targets.dim() == 2, "targets must be [batch, target_len], got ", targets.sizes());
  const int64_t length = targets.size(1);
  auto ids = drop_symbols(targets);
  // Shifting ids rather than embeddings: id 0 embeds to zeros, which is
  // what T2T's shift of the embedded targets puts first.
  if (length > 0) ids = torch::constant_pad_nd(ids.narrow(1, 0, length - 1), {1, 0}, 0);
  auto x = embed(target_embedding_, ids);
  x = t2t::dropout(add_timing(x, 0), config_.prepostprocess_dropout, is_training());
  const auto mask = attention_mask_from_padding(encoder_padding);
  const size_t probed = probe ? probed_layer(*probe) : decoder_.size();
  for (size_t i = 0; i < decoder_.size(); ++i) {
    torch::Tensor weights;
    x = decoder_[i]->forward(x, encoder_output, mask, i == probed ? &weights : nullptr);
    if (i == probed && attention) *attention = probed_heads(weights, *probe);
  }
  return decoder_final_(torch::Tensor(), x);
}

torch::Tensor Transformer::logits(const torch::Tensor& decoder_output) const {
  if (softmax_int8_) return (*softmax_int8_)(decoder_output);
  if (const auto* packed =
          CpuLinearWeight::usable(softmax_packed_, softmax_weights_, decoder_output))
    return packed->apply(decoder_output, torch::Tensor(), false);
  if (use_onednn_linear(decoder_output, softmax_weights_.size(0)))
    return onednn_linear(decoder_output, softmax_weights_, torch::Tensor());
  return torch::linear(decoder_output, softmax_weights_);
}

std::vector<std::pair<std::string, DenseImpl*>> Transformer::dense_layers() const {
  std::vector<std::pair<std::string, DenseImpl*>> out;
  for (const auto& named : named_modules("", false))
    if (auto* dense = named.value()->as<DenseImpl>()) out.emplace_back(named.key(), dense);
  return out;
}

void Transformer::quantize_int8() {
  softmax_packed_.reset();
  for (const auto& [name, dense] : dense_layers()) dense->quantize_int8(name);
  softmax_int8_ = std::make_shared<const Int8Linear>(softmax_weights_, torch::Tensor(),
                                                     "the softmax projection");
  input_embedding_int8_ = quantize_rows(input_embedding_, "the input embedding");
  target_embedding_int8_ = target_embedding_.is_same(input_embedding_)
                               ? input_embedding_int8_
                               : quantize_rows(target_embedding_, "the target embedding");
}

namespace {
// Where int8 checkpoints written before the embeddings were int8 keep the
// softmax projection.
constexpr const char* kSoftmaxInt8 = "softmax_int8";

// Frees the float matrices (vocabulary_matrices) once their int8 forms
// stand in for them.
void release_floats(const std::vector<std::pair<std::string, torch::Tensor>>& matrices) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, matrix] : matrices)
    matrix.set_data(torch::empty({0}, matrix.options()));
}
}  // namespace

Int8WeightMap Transformer::int8_weights() const {
  Int8WeightMap out;
  for (const auto& [name, dense] : dense_layers())
    out.emplace(name + ".weight", dense->int8_weights(name));
  for (const auto& [name, matrix] : vocabulary_matrices())
    out.emplace(name, quantize_rows(matrix, "the " + name + " matrix"));
  return out;
}

void Transformer::load_int8_weights(Int8WeightMap weights) {
  // Every name checked before any layer is built: a map that does not fit
  // changes nothing.
  const auto layers = dense_layers();
  const auto matrices = vocabulary_matrices();
  std::set<std::string> expected;
  for (const auto& [name, dense] : layers) expected.insert(name + ".weight");
  std::vector<std::string> problems;
  for (const auto& name : expected)
    if (!weights.count(name)) problems.push_back("missing " + name);
  // The embedding and softmax matrices: int8 under their names, or (earlier
  // int8 checkpoints) the softmax projection under kSoftmaxInt8 and the
  // embeddings float, loaded already and quantized here.
  std::string softmax_name = kSoftmaxInt8;
  std::map<std::string, Int8Weights> matrix_int8;
  for (const auto& [name, matrix] : matrices) {
    const auto entry = weights.find(name);
    if (matrix.is_same(softmax_weights_) && !weights.count(kSoftmaxInt8)) softmax_name = name;
    if (entry == weights.end()) continue;
    const auto& values = entry->second.values;
    if (values.defined() && values.dim() == 2 && values.sizes() != matrix.sizes())
      problems.push_back(name + " is " + c10::str(values.sizes()) + ", the model's " +
                         c10::str(matrix.sizes()));
    matrix_int8[name] = entry->second;
  }
  for (const auto& [name, w] : weights)
    if (!expected.count(name) && name != kSoftmaxInt8 && !matrix_int8.count(name))
      problems.push_back("unexpected " + name);
  const Int8Weights* softmax = weights.count(softmax_name) ? &weights.at(softmax_name) : nullptr;
  if (!softmax) problems.push_back("missing " + softmax_name);
  if (softmax && softmax->values.defined() && softmax->values.dim() == 2 &&
      softmax->values.sizes() != softmax_weights_.sizes())
    problems.push_back("the softmax projection is " + c10::str(softmax->values.sizes()) +
                       ", the model's " + c10::str(softmax_weights_.sizes()));
  if (!problems.empty())
    throw Error("the int8 weights do not fit the model (were the hparams or the vocabulary "
                "changed?): " + join(problems, "; "));
  auto embedding_int8 = [&](const torch::Tensor& embedding, const std::string& what) {
    for (const auto& [name, matrix] : matrices)
      if (matrix.is_same(embedding) && matrix_int8.count(name)) return matrix_int8.at(name);
    return quantize_rows(embedding, what);
  };
  input_embedding_int8_ = embedding_int8(input_embedding_, "the input embedding");
  target_embedding_int8_ = target_embedding_.is_same(input_embedding_)
                               ? input_embedding_int8_
                               : embedding_int8(target_embedding_, "the target embedding");
  // The layers lay their weights out side by side, the biggest first, each
  // thread taking the next one left: a layout made on one thread a layer
  // (LibTorch's, on CPUs without t2t's int8 kernels) is what an int8 load
  // waits for. Each layer's values are freed as soon as it has packed them:
  // a mapped checkpoint's pages then go back one layer at a time
  // (mapped_file.h).
  std::vector<std::pair<int64_t, std::function<void()>>> jobs;  // (values, job)
  // Undefined values are the layer's to refuse, naming it.
  auto size = [](const Int8Weights& w) { return w.values.defined() ? w.values.numel() : 0; };
  jobs.emplace_back(size(*softmax), [&] {
    softmax_int8_ = std::make_shared<const Int8Linear>(*softmax, torch::Tensor(),
                                                       "the softmax projection");
    weights.at(softmax_name) = Int8Weights{};
  });
  for (const auto& [name, dense] : layers) {
    auto& entry = weights.at(name + ".weight");
    jobs.emplace_back(size(entry), [&entry, dense = dense, &name = name] {
      dense->load_int8(entry, name);
      entry = Int8Weights{};
    });
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::atomic<size_t> next{0};
  at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) {
    torch::NoGradGuard no_grad;  // grad mode is per thread
    for (size_t j; (j = next++) < jobs.size();) jobs[j].second();
  });
  // As the dense layers release theirs: the float matrices are not read
  // again (an int8 checkpoint's were not even loaded).
  release_floats(vocabulary_matrices());
}

void Transformer::pack_for_inference() {
  for (const auto& [name, dense] : dense_layers()) dense->pack_for_inference();
  softmax_packed_ = softmax_int8_ ? nullptr : CpuLinearWeight::pack(softmax_weights_);
}

void Transformer::release_float_weights() {
  for (const auto& [name, dense] : dense_layers()) dense->release_float_weight();
  // The embedding and softmax matrices once their int8 forms are in use.
  if (!softmax_int8_ || !input_embedding_int8_.values.defined() ||
      !target_embedding_int8_.values.defined())
    return;
  release_floats(vocabulary_matrices());
}

torch::Tensor Transformer::body(const torch::Tensor& inputs, const torch::Tensor& targets) {
  TORCH_CHECK(inputs.size(0) == targets.size(0),
              "inputs and targets differ in batch size: ", inputs.size(0), " and ",
              targets.size(0));
  auto encoded = encode(inputs);
  return decode(targets, encoded.first, encoded.second);
}

torch::Tensor Transformer::forward(const torch::Tensor& inputs, const torch::Tensor& targets) {
  return logits(body(inputs, targets));
}

torch::Tensor Transformer::forward_labelled(const torch::Tensor& inputs,
                                            const torch::Tensor& targets) {
  const auto h = body(inputs, targets);
  return logits(h.reshape({-1, h.size(-1)}).index_select(0, labelled_positions(targets)));
}

std::pair<torch::Tensor, torch::Tensor> Transformer::forward_labelled_with_attention(
    const torch::Tensor& inputs, const torch::Tensor& targets, const AttentionProbe& probe) {
  TORCH_CHECK(inputs.size(0) == targets.size(0),
              "inputs and targets differ in batch size: ", inputs.size(0), " and ",
              targets.size(0));
  const auto [encoded, padding] = encode(inputs);
  torch::Tensor attention;
  const auto h = decode(targets, encoded, padding, &probe, &attention);
  return {logits(h.reshape({-1, h.size(-1)}).index_select(0, labelled_positions(targets))),
          attention};
}

std::unique_ptr<DecoderState> Transformer::start_decoding(const torch::Tensor& inputs) {
  if (!causal_) {
    throw Error("incremental decoding needs causal_decoder_self_attention=true.");
  }
  if (static_decoding_ && !is_training()) return start_static_decoding(inputs);
  torch::NoGradGuard no_grad;
  auto state = std::make_unique<TransformerDecoderState>();
  torch::Tensor memory;
  std::tie(memory, state->encoder_padding) = encode(inputs);
  state->memory_mask = attention_mask_from_padding(state->encoder_padding);
  state->layers.resize(decoder_.size());
  // The slot-table kernels have no relative positions: such a model's
  // caches are reordered with its beams instead.
  state->use_slots = !is_training() && decode_attention_supported(memory) &&
                     config_.max_relative_position == 0;
  // An int8 model keeps its attention caches in bfloat16: they are most of
  // a decoding batch's memory, its products are approximate already, and
  // the attention reads half the bytes.
  const bool bf16_caches = state->use_slots && quantized();
  for (size_t i = 0; i < decoder_.size(); ++i) {
    decoder_[i]->start_decoding(memory, state->layers[i], bf16_caches);
  }
  // Reordered at every beam step and read for its batch size only.
  state->encoder_output = memory.narrow(1, 0, 0);
  if (state->use_slots) state->slots = torch::zeros({memory.size(0), 0}, torch::kLong);
  return state;
}

void Transformer::reorder_state(DecoderState& base, const torch::Tensor& index) {
  if (auto* fixed = dynamic_cast<StaticTransformerState*>(&base))
    return static_reorder_state(*fixed, index);
  auto* state = dynamic_cast<TransformerDecoderState*>(&base);
  if (!state) return T2TModel::reorder_state(base, index);
  torch::NoGradGuard no_grad;
  const auto idx = index.to(state->encoder_padding.device(), torch::kLong);
  const int64_t new_rows = idx.size(0);
  state->encoder_output = state->encoder_output.index_select(0, idx);
  state->encoder_padding = state->encoder_padding.index_select(0, idx);
  if (state->use_slots) {
    // Only the table moves. Rows that outgrow the slots (more rows than the
    // caches were made for) lay the caches out anew; fewer rows (sentences
    // done) leave slots unused, which costs memory the batch had at its
    // start anyway, and no time.
    state->slots = state->slots.index_select(0, idx);
    const auto& first = state->layers.empty() ? torch::Tensor() : state->layers[0].self_keys;
    if (first.defined() && new_rows > first.size(0)) compact_slots(*state, first.size(2));
  } else {
    // Self-attention caches are reordered whole, unused capacity included,
    // so that the next step still appends in place.
    for (auto& layer : state->layers) {
      if (layer.self_keys.defined()) {
        layer.self_keys = layer.self_keys.index_select(0, idx);
        layer.self_values = layer.self_values.index_select(0, idx);
      }
    }
  }
  // The memory row each new row reads. Blocks of rows reading one memory
  // row share it: making beams (the batch grows by a factor), reordering
  // beams within their sentence (the grouping stays) and dropping whole
  // sentences (it stays too) copy no memory, or only the rows kept.
  const auto kept = regroup_memory(idx, state->memory_mask.size(0), state->group);
  if (kept.defined()) {
    state->memory_mask = state->memory_mask.index_select(0, kept);
    for (auto& layer : state->layers) {
      layer.memory_keys = layer.memory_keys.index_select(0, kept);
      layer.memory_values = layer.memory_values.index_select(0, kept);
    }
  }
}

torch::Tensor Transformer::decode_step(DecoderState& state, const torch::Tensor& last_ids) {
  TORCH_CHECK(last_ids.dim() == 1 && last_ids.size(0) == state.batch_size(), "last_ids must be [",
              state.batch_size(), "], got ", last_ids.sizes());
  torch::NoGradGuard no_grad;
  if (auto* fixed = dynamic_cast<StaticTransformerState*>(&state)) {
    if (state.probe)
      throw Error("word alignments cannot be read from static-shape decoding (CUDA graphs); "
                  "decode without cuda_graphs to have them");
    return static_decode_step(*fixed, last_ids);
  }
  auto x = embed(target_embedding_, last_ids.reshape({-1, 1}));
  x = t2t::dropout(add_timing(x, state.length), config_.prepostprocess_dropout, is_training());
  auto* own = dynamic_cast<TransformerDecoderState*>(&state);
  const auto mask =
      own ? own->memory_mask : attention_mask_from_padding(state.encoder_padding);
  const int64_t group = own ? own->group : 1;
  torch::Tensor slots;
  if (own && own->use_slots) {
    make_room(*own);
    // The new position of row r goes to slot r.
    auto& table = own->slots;
    table = with_room(table, 1, state.length);
    table.select(1, state.length).copy_(torch::arange(state.batch_size(), table.options()));
    slots = table;
  }
  const size_t probed = state.probe ? probed_layer(*state.probe) : decoder_.size();
  for (size_t i = 0; i < decoder_.size(); ++i) {
    torch::Tensor weights;
    x = decoder_[i]->step(x, state.layers[i], state.length, mask, group, slots,
                          i == probed ? &weights : nullptr);
    if (i == probed) state.attention = probed_heads(weights, *state.probe).squeeze(1);
  }
  x = decoder_final_(torch::Tensor(), x);
  ++state.length;
  if (own && own->softmax) {
    const auto& restricted = *own->softmax;
    const auto h = x.squeeze(1);
    if (restricted.int8) return (*restricted.int8)(h);
    if (restricted.packed && h.device().is_cpu() && h.scalar_type() == torch::kFloat)
      return restricted.packed->apply(h, torch::Tensor(), false);
    return torch::linear(h, restricted.weight).to(torch::kFloat);
  }
  return logits(x.squeeze(1)).to(torch::kFloat);
}

bool Transformer::restrict_output(DecoderState& state, const torch::Tensor& ids) {
  auto* own = dynamic_cast<TransformerDecoderState*>(&state);
  if (!own) return false;  // static shapes keep the whole vocabulary's
  torch::NoGradGuard no_grad;
  auto restricted = std::make_shared<TransformerDecoderState::Softmax>();
  if (softmax_int8_) {
    // The chosen rows of the int8 matrix as they are: each logit is the one
    // the whole projection gives. LibTorch's int8 engine has no such view.
    restricted->int8 = softmax_int8_->select_outputs(ids.to(torch::kCPU));
    if (!restricted->int8) return false;
  } else {
    restricted->weight = softmax_weights_.index_select(0, ids.to(softmax_weights_.device()));
    // t2t's float kernel computes each output alone, in the same order:
    // the same logits as the whole matrix's.
    if (softmax_packed_) restricted->packed = CpuLinearWeight::pack(restricted->weight);
  }
  own->softmax = std::move(restricted);
  return true;
}

T2T_REGISTER_MODEL(Transformer);

}  // namespace t2t
