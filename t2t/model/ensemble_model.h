// Several models of one target vocabulary decoded as one: each step's
// log-probabilities are the weighted mean of the members' (Marian's and
// Sockeye's ensembles), so any search runs over an ensemble unchanged.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "t2t/model/t2t_model.h"

namespace t2t {

class EnsembleModel : public T2TModel {
 public:
  // At least two members, each with a weight > 0 (scaled to sum to 1).
  // Throws t2t::Error for fewer members, a bad weight, or members whose
  // target vocabularies differ in size (`target_vocab_sizes`, one each).
  EnsembleModel(std::vector<std::shared_ptr<T2TModel>> members, std::vector<double> weights,
                const std::vector<int64_t>& target_vocab_sizes);

  // Log-probabilities, not logits: sum_i w_i log_softmax(member_i).
  torch::Tensor forward(const torch::Tensor& inputs, const torch::Tensor& targets) override;
  torch::Tensor forward_labelled(const torch::Tensor& inputs, const torch::Tensor& targets) override;
  std::unique_ptr<DecoderState> start_decoding(const torch::Tensor& inputs) override;
  torch::Tensor decode_step(DecoderState& state, const torch::Tensor& last_ids) override;
  void reorder_state(DecoderState& state, const torch::Tensor& index) override;
  // Every member must report it; the attention is their weighted mean.
  bool reports_attention() const override;
  std::pair<torch::Tensor, torch::Tensor> forward_labelled_with_attention(
      const torch::Tensor& inputs, const torch::Tensor& targets,
      const AttentionProbe& probe) override;

  const std::vector<std::shared_ptr<T2TModel>>& members() const { return members_; }
  const std::vector<double>& weights() const { return weights_; }

 private:
  std::vector<std::shared_ptr<T2TModel>> members_;
  std::vector<double> weights_;
};

}  // namespace t2t
