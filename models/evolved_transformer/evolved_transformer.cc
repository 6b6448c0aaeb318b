#include "models/evolved_transformer/evolved_transformer.h"

#include <tuple>

#include "models/transformer_static_decoding.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/kernels/dropout.h"
#include "t2t/model/honoured_hparams.h"
#include "t2t/model/model_registry.h"

namespace t2t {
namespace {

constexpr const char* kWhat = "evolved transformer";

// The state start_decoding() returns: the generic one (encoder output and
// padding) with the cells' own caches. Their encoder-decoder keys and
// values, and the mask, have a row per `group` consecutive rows: the beams
// of a sentence share them (MemoryGrouping, transformer_static_decoding.h).
struct EvolvedDecoderState : DecoderState {
  torch::Tensor memory_mask;  // [batch / group, 1, 1, input_len] bool
  int64_t group = 1;
  std::vector<EvolvedLayerCache> cells;
};

}  // namespace

EvolvedTransformer::EvolvedTransformer(const HParams& hp, const FeatureInfo& features)
    : config_(TransformerLayerConfig::from_hparams(hp)) {
  // T2T's Evolved Transformer is a Transformer with other cells: it
  // carries the Transformer's hparams, honoured as the Transformer's are.
  for (const std::string& note : check_honoured_hparams(hp, "transformer"))
    spdlog::info("{}", note);
  if (hp.has("num_trainable_top_decoder_layers") &&
      hp.get_int("num_trainable_top_decoder_layers") >= 0)
    throw Error("hparam num_trainable_top_decoder_layers=" +
                std::to_string(hp.get_int("num_trainable_top_decoder_layers")) +
                " (training only the top decoder layers) is not supported by the " + kWhat +
                "; leave it at -1 to train every weight.");
  const int64_t hidden = config_.hidden_size;
  if (hidden % 2 != 0)
    throw Error("the " + std::string(kWhat) + " needs an even hidden_size (its convolutions have " +
                "hidden_size / 2 channels), got " + std::to_string(hidden) + ".");
  timing_ = uses_timing_signal(hp, kWhat);
  embedding_scale_ = embedding_scale(hp, hidden, kWhat);
  symbol_dropout_ = hp.has("symbol_dropout") ? hp.get_float("symbol_dropout") : 0.0;
  if (hp.has("causal_decoder_self_attention") && !hp.get_bool("causal_decoder_self_attention"))
    throw Error("hparam causal_decoder_self_attention=false is not supported by the " +
                std::string(kWhat) + ": its decoder convolutions are causal.");

  matrices_ = register_vocabulary_matrices(*this, hp, features, hidden, kWhat);
  target_space_ =
      register_target_space(*this, hp, hidden, config_.initializer, config_.initializer_gain);

  const bool encoder_attention =
      hp.has("et_encoder_self_attention") ? hp.get_bool("et_encoder_self_attention") : true;
  encoder_layers_ = register_module("encoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < stack_layers(hp, "num_encoder_layers"); ++i) {
    encoder_.push_back(EvolvedEncoderLayer(config_, encoder_attention));
    encoder_layers_->push_back(encoder_.back());
  }
  encoder_final_ = register_module("encoder_final", PrePostProcess(config_.preprocess, config_));
  decoder_layers_ = register_module("decoder", torch::nn::ModuleList());
  for (int64_t i = 0; i < stack_layers(hp, "num_decoder_layers"); ++i) {
    decoder_.push_back(EvolvedDecoderLayer(config_));
    decoder_layers_->push_back(decoder_.back());
  }
  decoder_final_ = register_module("decoder_final", PrePostProcess(config_.preprocess, config_));
}

torch::Tensor EvolvedTransformer::embed(const torch::Tensor& weights,
                                        const torch::Tensor& ids) const {
  return embed_symbols(weights, ids, embedding_scale_);
}

torch::Tensor EvolvedTransformer::add_timing(const torch::Tensor& x, int64_t start) const {
  if (!timing_) return x;
  return x + timing_signal_1d(x.size(1), config_.hidden_size, start).to(x.device(), x.scalar_type());
}

std::pair<torch::Tensor, torch::Tensor> EvolvedTransformer::encode(const torch::Tensor& inputs) {
  TORCH_CHECK(inputs.dim() == 2, "inputs must be [batch, input_len], got ", inputs.sizes());
  // T2T reads the padding off the embedded inputs: dropped symbols count.
  const auto ids = drop_symbols(inputs, symbol_dropout_, is_training());
  const auto padding = ids.eq(0);
  auto x = embed(matrices_.input, ids);
  if (target_space_.defined()) x = x + target_space_;
  x = t2t::dropout(add_timing(x, 0), config_.prepostprocess_dropout, is_training());
  const auto mask = attention_mask_from_padding(padding);
  const auto nonpadding = padding.logical_not().unsqueeze(-1).to(x.scalar_type());
  for (auto& layer : encoder_) x = layer(x, mask, nonpadding);
  return {encoder_final_(torch::Tensor(), x), padding};
}

torch::Tensor EvolvedTransformer::decode(const torch::Tensor& targets,
                                         const torch::Tensor& encoder_output,
                                         const torch::Tensor& encoder_padding) {
  TORCH_CHECK(targets.dim() == 2, "targets must be [batch, target_len], got ", targets.sizes());
  const int64_t length = targets.size(1);
  // The targets shifted right by one, 0 (a zero embedding) first.
  auto ids = drop_symbols(targets, symbol_dropout_, is_training());
  if (length > 0) ids = torch::constant_pad_nd(ids.narrow(1, 0, length - 1), {1, 0}, 0);
  auto x = embed(matrices_.target, ids);
  x = t2t::dropout(add_timing(x, 0), config_.prepostprocess_dropout, is_training());
  const auto mask = attention_mask_from_padding(encoder_padding);
  for (auto& layer : decoder_) x = layer(x, encoder_output, mask);
  return decoder_final_(torch::Tensor(), x);
}

torch::Tensor EvolvedTransformer::logits(const torch::Tensor& decoder_output) const {
  return torch::linear(decoder_output, matrices_.softmax);
}

torch::Tensor EvolvedTransformer::body(const torch::Tensor& inputs, const torch::Tensor& targets) {
  TORCH_CHECK(inputs.size(0) == targets.size(0), "inputs and targets differ in batch size: ",
              inputs.size(0), " and ", targets.size(0));
  const auto [encoded, padding] = encode(inputs);
  return decode(targets, encoded, padding);
}

torch::Tensor EvolvedTransformer::forward(const torch::Tensor& inputs,
                                          const torch::Tensor& targets) {
  return logits(body(inputs, targets));
}

torch::Tensor EvolvedTransformer::forward_labelled(const torch::Tensor& inputs,
                                                   const torch::Tensor& targets) {
  const auto h = body(inputs, targets);
  return logits(h.reshape({-1, h.size(-1)}).index_select(0, labelled_positions(targets)));
}

std::unique_ptr<DecoderState> EvolvedTransformer::start_decoding(const torch::Tensor& inputs) {
  torch::NoGradGuard no_grad;
  auto state = std::make_unique<EvolvedDecoderState>();
  std::tie(state->encoder_output, state->encoder_padding) = encode(inputs);
  state->memory_mask = attention_mask_from_padding(state->encoder_padding);
  state->cells.resize(decoder_.size());
  for (size_t i = 0; i < decoder_.size(); ++i)
    decoder_[i]->start_decoding(state->encoder_output, state->cells[i]);
  // Reordered with the beams and read for its batch size only: the cells
  // hold what they need of it.
  state->encoder_output = state->encoder_output.narrow(1, 0, 0);
  return state;
}

void EvolvedTransformer::reorder_state(DecoderState& base, const torch::Tensor& index) {
  T2TModel::reorder_state(base, index);
  auto* state = dynamic_cast<EvolvedDecoderState*>(&base);
  if (!state) return;
  torch::NoGradGuard no_grad;
  const auto idx = index.to(state->memory_mask.device(), torch::kLong);
  auto select = [](torch::Tensor& t, const torch::Tensor& rows) {
    if (t.defined()) t = t.index_select(0, rows);
  };
  for (auto& cell : state->cells) {
    for (DecoderLayerCache* cache : {&cell.first, &cell.second}) {
      select(cache->self_keys, idx);
      select(cache->self_values, idx);
    }
    select(cell.branches, idx);
    select(cell.final, idx);
  }
  // The memory rows move only when whole sentences are dropped or made
  // into beams.
  const auto kept = regroup_memory(idx, state->memory_mask.size(0), state->group);
  if (!kept.defined()) return;
  select(state->memory_mask, kept);
  for (auto& cell : state->cells)
    for (DecoderLayerCache* cache : {&cell.first, &cell.second}) {
      select(cache->memory_keys, kept);
      select(cache->memory_values, kept);
    }
}

torch::Tensor EvolvedTransformer::decode_step(DecoderState& base, const torch::Tensor& last_ids) {
  auto* state = dynamic_cast<EvolvedDecoderState*>(&base);
  if (!state) throw Error("the " + std::string(kWhat) + " decodes from its own start_decoding()");
  TORCH_CHECK(last_ids.dim() == 1 && last_ids.size(0) == state->batch_size(),
              "last_ids must be [", state->batch_size(), "], got ", last_ids.sizes());
  torch::NoGradGuard no_grad;
  auto x = embed(matrices_.target, last_ids.reshape({-1, 1}));
  x = t2t::dropout(add_timing(x, state->length), config_.prepostprocess_dropout, is_training());
  for (size_t i = 0; i < decoder_.size(); ++i)
    x = decoder_[i]->step(x, state->cells[i], state->length, state->memory_mask, state->group);
  x = decoder_final_(torch::Tensor(), x);
  ++state->length;
  return logits(x.squeeze(1)).to(torch::kFloat);
}

T2T_REGISTER_MODEL(EvolvedTransformer);

}  // namespace t2t
