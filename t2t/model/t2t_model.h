// The interface every sequence-to-sequence model offers the trainer and the
// decoder: teacher-forced logits for training and evaluation, and an
// incremental decoder whose state the search can reorder and shrink. What
// only some models can do has an interface of its own, which such a model
// derives from as well: InferenceModel (int8, packed weights, CUDA graphs)
// and TensorFlowImport (T2T's checkpoints).
//
// Token ids are int64 with 0 = padding; tensors are documented as
// [batch, length, hidden]. Dropout follows torch::nn::Module::train()/eval():
// T2T forces every dropout to 0 outside training, and so does eval().
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "t2t/model/attention_probe.h"
#include "t2t/model/model_registry.h"

namespace t2t {

// What a model needs to know about the problem's features.
struct FeatureInfo {
  int64_t input_vocab_size = 0;
  int64_t target_vocab_size = 0;
  // True only when inputs and targets use the very same vocabulary object:
  // only then may their embeddings be one matrix.
  bool shared_vocabulary = false;
};

// Cached tensors of one decoder layer. The self-attention caches have room
// for `capacity` positions of which the state's `length` are filled, so a
// step appends in place instead of copying the whole history.
struct DecoderLayerCache {
  torch::Tensor self_keys;      // [batch, heads, capacity, key_depth]
  torch::Tensor self_values;    // [batch, heads, capacity, value_depth]
  torch::Tensor memory_keys;    // [batch, heads, input_len, key_depth], from the encoder
  torch::Tensor memory_values;  // [batch, heads, input_len, value_depth]
};

// Everything incremental decoding carries from one step to the next. Models
// with other needs may derive from it.
struct DecoderState {
  virtual ~DecoderState() = default;

  torch::Tensor encoder_output;   // [batch, input_len, hidden]
  torch::Tensor encoder_padding;  // [batch, input_len] bool, true at padding
  std::vector<DecoderLayerCache> layers;
  int64_t length = 0;  // target positions decoded so far
  // Set by the caller before a step to have decode_step() also leave the
  // probed encoder-decoder attention of that step in `attention`
  // ([batch, input_len] float32, on the model's device).
  std::optional<AttentionProbe> probe;
  torch::Tensor attention;

  int64_t batch_size() const { return encoder_output.size(0); }
};

class T2TModel : public torch::nn::Module {
 public:
  ~T2TModel() override = default;

  // inputs [batch, input_len], targets [batch, target_len] (int64, 0 = pad)
  // -> logits [batch, target_len, target_vocab] (float32, or the autocast
  // dtype). Position t sees targets[:, :t] only: the decoder input is the
  // targets shifted right by one with 0 first.
  virtual torch::Tensor forward(const torch::Tensor& inputs, const torch::Tensor& targets) = 0;

  // The logits of the labelled positions only (targets != 0), in row-major
  // order: [labelled_positions, target_vocab]. All that the training loss
  // needs. The default selects them from forward(); a model can skip the
  // vocabulary projection of the padded positions instead.
  virtual torch::Tensor forward_labelled(const torch::Tensor& inputs, const torch::Tensor& targets);

  // Runs the encoder once for inputs [batch, input_len]. Gradients are off
  // inside start_decoding() and decode_step(); call eval() first for
  // deterministic results.
  virtual std::unique_ptr<DecoderState> start_decoding(const torch::Tensor& inputs) = 0;

  // last_ids [batch_in_state] (0 before the first step) -> logits
  // [batch_in_state, target_vocab] for position state.length, which it then
  // advances by one.
  // (The logits come back in float32 whatever the model computes in: the
  // search's scores add up log-probabilities over many steps.)
  virtual torch::Tensor decode_step(DecoderState& state, const torch::Tensor& last_ids) = 0;

  // Keeps rows `index` [new_batch] (int64) of every batch-major tensor of the
  // state, in that order: beam reordering, or dropping finished sentences.
  virtual void reorder_state(DecoderState& state, const torch::Tensor& index);

  // Has the decode_step()s on `state` from now on return the logits of the
  // target ids `ids` only (int64, ascending, on the model's device):
  // [batch_in_state, ids.size(0)], column j holding the logit that id
  // ids[j] has over the whole vocabulary. A lexical shortlist's batch
  // columns (t2t/search/lexical_shortlist.h) come this way, so that a model
  // can skip the other rows of its output projection. Returns false when
  // the model does not (the default): its steps keep returning every id's
  // logits, and the caller selects the columns itself.
  virtual bool restrict_output(DecoderState& state, const torch::Tensor& ids);

  // Whether decode_step() honours DecoderState::probe and
  // forward_labelled_with_attention() works: what word alignments and
  // guided alignment need.
  virtual bool reports_attention() const { return false; }
  // forward_labelled()'s logits and the encoder-decoder attention `probe`
  // picks, [batch, target_len, input_len] float32 (differentiable). The
  // default throws t2t::Error: the model cannot report it.
  virtual std::pair<torch::Tensor, torch::Tensor> forward_labelled_with_attention(
      const torch::Tensor& inputs, const torch::Tensor& targets, const AttentionProbe& probe);
};

// The row of T2T's target_space_embedding that its translation problems
// use (T2T 1.15 gives them all SpaceID.GENERIC, 0).
constexpr int64_t kT2TTargetSpace = 0;

// Flat indices [labelled_positions] (int64) of the non-pad entries of
// targets [batch, target_len], in row-major order.
torch::Tensor labelled_positions(const torch::Tensor& targets);

}  // namespace t2t
