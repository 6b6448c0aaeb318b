// The Transformer's decoding steps at static shapes, and captured into CUDA
// graphs on a GPU (static_decoding.h, InferenceModel::set_static_decoding).
#include "models/transformer_static_decoding.h"

#include <ATen/record_function.h>

#include <string>

#include "models/static_decoding.h"
#include "models/transformer.h"
#include "t2t/core/error.h"

namespace t2t {
namespace {

// Graphs kept at most: each holds its kernels' launch parameters, and the
// shapes a process meets are a few dozen (sentence buckets x position
// buckets x source buckets); beyond, steps run uncaptured.
constexpr size_t kMaxGraphs = 256;

// The leading `rows` of `buffer` take, in order, its rows `order` (the
// whole buffer's, which may be more than `rows`), over the first `length`
// entries of dimension `dim`.
void move_rows(const torch::Tensor& buffer, const torch::Tensor& order, int64_t rows, int64_t dim,
               int64_t length) {
  const auto window = buffer.narrow(dim, 0, length);
  window.narrow(0, 0, rows).copy_(window.index_select(0, order));
}

}  // namespace

bool MemoryGrouping::unchanged(int64_t memory_rows) const {
  if (static_cast<int64_t>(kept.size()) > memory_rows) return false;
  for (size_t m = 0; m < kept.size(); ++m)
    if (kept[m] != static_cast<int64_t>(m)) return false;
  return true;
}

MemoryGrouping memory_grouping(const std::vector<int64_t>& from, int64_t rows, int64_t group) {
  const int64_t new_rows = static_cast<int64_t>(from.size());
  const auto uniform = [&](int64_t block) {
    if (new_rows % block != 0) return false;
    for (int64_t j = 0; j < new_rows; ++j)
      if (from[j] / group != from[j - j % block] / group) return false;
    return true;
  };
  std::vector<int64_t> candidates;
  if (rows > 0 && new_rows > rows && new_rows % rows == 0)
    candidates.push_back(group * (new_rows / rows));
  candidates.push_back(group);
  MemoryGrouping out;
  for (int64_t c : candidates)
    if (c > 1 && uniform(c)) {
      out.group = c;
      break;
    }
  for (int64_t j = 0; j < new_rows; j += out.group) out.kept.push_back(from[j] / group);
  return out;
}

torch::Tensor regroup_memory(const torch::Tensor& index, int64_t memory_rows, int64_t& group) {
  const auto on_host = index.to(torch::kCPU, torch::kLong).contiguous();
  const MemoryGrouping grouping = memory_grouping(
      std::vector<int64_t>(on_host.data_ptr<int64_t>(), on_host.data_ptr<int64_t>() + on_host.numel()),
      memory_rows * group, group);
  group = grouping.group;
  if (static_cast<int64_t>(grouping.kept.size()) == memory_rows && grouping.unchanged(memory_rows))
    return torch::Tensor();
  return torch::tensor(grouping.kept, torch::kLong).to(index.device());
}

void Transformer::set_static_decoding(bool on, bool graphs) {
  static_decoding_ = on;
  decode_graphs_ = on && graphs;
  // A fresh arena: graphs read the weights in place, so a model whose
  // weights were replaced since must not replay the old ones.
  arena_ = on ? std::make_shared<StaticDecodingArena>() : nullptr;
}

size_t Transformer::decode_graphs() const { return arena_ ? arena_->graphs() : 0; }

std::unique_ptr<DecoderState> Transformer::start_static_decoding(const torch::Tensor& inputs) {
  if (decode_graphs_ && !inputs.device().is_cuda())
    throw OptionError("cuda_graphs", "{cuda_graphs} captures decoding steps on a GPU, and this "
                                     "model decodes on " + inputs.device().str() +
                                     "; use {device}=cuda or leave {cuda_graphs} out");
  if (decoder_.empty()) throw Error("static decoding needs at least one decoder layer");
  torch::NoGradGuard no_grad;
  auto state = std::make_unique<StaticTransformerState>();
  state->arena = arena_.get();
  state->hold = std::unique_lock<std::mutex>(arena_->busy);
  if (inputs.device().is_cuda()) state->stream.emplace(inputs.device());
  auto [memory, padding] = encode(inputs);
  std::vector<DecoderLayerCache> caches(decoder_.size());
  for (size_t i = 0; i < decoder_.size(); ++i) decoder_[i]->start_decoding(memory, caches[i]);

  const int64_t batch = inputs.size(0), length = inputs.size(1);
  auto& arena = *arena_;
  const int64_t sentences = sentence_bucket(batch);
  state->source = length_bucket(length);
  arena.reserve(decoder_.size(), caches[0].memory_keys, caches[0].memory_values, sentences,
                sentences, length_bucket(1), state->source);
  for (size_t i = 0; i < decoder_.size(); ++i) {
    arena.memory_keys[i].narrow(0, 0, batch).narrow(2, 0, length).copy_(caches[i].memory_keys);
    arena.memory_values[i].narrow(0, 0, batch).narrow(2, 0, length).copy_(
        caches[i].memory_values);
  }
  // Positions past the source are masked; what they hold (an earlier
  // batch's keys) weighs nothing.
  const auto mask = arena.memory_mask.narrow(0, 0, batch);
  mask.narrow(3, 0, state->source).fill_(false);
  mask.narrow(3, 0, length).copy_(attention_mask_from_padding(padding));
  state->memory_rows = batch;
  state->encoder_output = torch::empty({batch, 0, config_.hidden_size}, memory.options());
  return state;
}

void Transformer::static_reorder_state(StaticTransformerState& state, const torch::Tensor& index) {
  torch::NoGradGuard no_grad;
  const auto idx = index.to(torch::kCPU, torch::kLong).contiguous();
  const int64_t rows = state.batch_size(), new_rows = idx.numel();
  const std::vector<int64_t> from(idx.data_ptr<int64_t>(), idx.data_ptr<int64_t>() + new_rows);
  std::vector<int64_t> continues(new_rows);
  for (int64_t j = 0; j < new_rows; ++j) {
    TORCH_CHECK(from[j] >= 0 && from[j] < rows, "reorder_state: row ", from[j], " of ", rows);
    continues[j] = state.pending.empty() ? from[j] : state.pending[from[j]];
  }
  const MemoryGrouping grouping = memory_grouping(from, rows, state.group);
  const auto& kept = grouping.kept;
  const int64_t memory_rows = static_cast<int64_t>(kept.size());
  if (!grouping.unchanged(state.memory_rows)) {
    // The sentences' keys move now, outside the graphs: only when sentences
    // leave the batch, a few times a batch.
    auto& arena = *state.arena;
    const auto like_keys = arena.memory_keys[0], like_values = arena.memory_values[0];
    arena.reserve(arena.self_keys.size(), like_keys, like_values, arena.rows(),
                  sentence_bucket(memory_rows), arena.positions(), state.source);
    const auto order = torch::tensor(kept, torch::kLong).to(like_keys.device());
    for (size_t i = 0; i < arena.memory_keys.size(); ++i) {
      move_rows(arena.memory_keys[i], order, memory_rows, 2, state.source);
      move_rows(arena.memory_values[i], order, memory_rows, 2, state.source);
    }
    move_rows(arena.memory_mask, order, memory_rows, 3, state.source);
  }
  state.memory_rows = memory_rows;
  state.group = grouping.group;
  state.pending = std::move(continues);
  state.encoder_output = torch::empty({new_rows, 0, config_.hidden_size},
                                      state.encoder_output.options());
}

torch::Tensor Transformer::static_decode_step(StaticTransformerState& state,
                                              const torch::Tensor& last_ids) {
  auto& arena = *state.arena;
  const int64_t rows = state.batch_size();
  const int64_t sentences = sentence_bucket(state.memory_rows);
  const StaticStepShape shape{sentences * state.group, state.group,
                              length_bucket(state.length + 1), state.source};
  const auto like_keys = arena.memory_keys[0], like_values = arena.memory_values[0];
  arena.reserve(decoder_.size(), like_keys, like_values, shape.rows, sentences, shape.positions,
                state.source);
  torch::Tensor signal;
  if (timing_) {
    // Graphs read the signal where it lies: a new one (grown, or another
    // type) makes them capture again.
    signal = timing_signal(arena.positions(), target_embedding_);
    if (!arena.timing.defined() || !arena.timing.is_same(signal)) {
      arena.timing = signal;
      arena.forget_graphs();
    }
  }
  // The step's inputs go where the body (or its graph) reads them. Padding
  // rows continue row 0.
  std::vector<int64_t> order(shape.rows, 0);
  for (int64_t r = 0; r < rows; ++r) order[r] = state.pending.empty() ? r : state.pending[r];
  arena.reorder.narrow(0, 0, shape.rows)
      .copy_(torch::from_blob(order.data(), {shape.rows}, torch::kLong));
  arena.ids.narrow(0, 0, rows).copy_(last_ids.reshape({rows}));
  arena.position.fill_(state.length);

  auto& step = arena.step(shape);
  const auto body = [&] { step.logits = static_step_body(shape); };
  if (decode_graphs_ && step.runs > 0 && (step.graph || arena.graphs() < kMaxGraphs)) {
    // The second time a shape comes: its first run made what LibTorch sets
    // up on first use (cuBLAS handles, workspaces) outside the capture.
    if (!step.graph) step.graph = CudaGraph::capture(last_ids.device(), body);
    step.graph->replay();
  } else {
    body();
  }
  ++step.runs;
  ++state.length;
  state.pending.clear();
  // A copy: the next replay writes over the graph's output.
  return step.logits.narrow(0, 0, rows).clone();
}

torch::Tensor Transformer::static_step_body(const StaticStepShape& shape) {
  RECORD_FUNCTION("t2t::static_decode_step", std::vector<c10::IValue>());
  auto& a = *arena_;
  const int64_t rows = shape.rows, sentences = rows / shape.group;
  // Beams reordered (and finished sentences dropped) first: each row takes
  // the history of the row it continues.
  const auto order = a.reorder.narrow(0, 0, rows);
  for (size_t i = 0; i < decoder_.size(); ++i) {
    move_rows(a.self_keys[i], order, rows, 2, shape.positions);
    move_rows(a.self_values[i], order, rows, 2, shape.positions);
  }
  auto x = embed(target_embedding_, a.ids.narrow(0, 0, rows).view({rows, 1}));
  if (a.timing.defined()) x = x + a.timing.index_select(0, a.position);
  const auto self_mask =
      torch::arange(shape.positions, a.position.options()).le(a.position).view({1, 1, 1, -1});
  const auto memory_mask = a.memory_mask.narrow(0, 0, sentences).narrow(3, 0, shape.source);
  for (size_t i = 0; i < decoder_.size(); ++i) {
    DecoderLayerCache cache{a.self_keys[i].narrow(0, 0, rows), a.self_values[i].narrow(0, 0, rows),
                            a.memory_keys[i].narrow(0, 0, sentences).narrow(2, 0, shape.source),
                            a.memory_values[i].narrow(0, 0, sentences).narrow(2, 0, shape.source)};
    x = decoder_[i]->static_step(x, cache, a.position, self_mask, shape.positions, memory_mask,
                                 shape.group);
  }
  x = decoder_final_(torch::Tensor(), x);
  return logits(x.squeeze(1)).to(torch::kFloat);
}

}  // namespace t2t
