#include "t2t/model/ensemble_model.h"

#include <cmath>
#include <string>

#include "t2t/core/error.h"

namespace t2t {
namespace {

// The members' states, and the batch-major tensors the search reads, kept
// as the first member's.
struct EnsembleState : DecoderState {
  std::vector<std::unique_ptr<DecoderState>> members;

  void mirror_first() {
    encoder_output = members[0]->encoder_output;
    encoder_padding = members[0]->encoder_padding;
  }
};

}  // namespace

EnsembleModel::EnsembleModel(std::vector<std::shared_ptr<T2TModel>> members,
                             std::vector<double> weights,
                             const std::vector<int64_t>& target_vocab_sizes)
    : members_(std::move(members)), weights_(std::move(weights)) {
  if (members_.size() < 2)
    throw Error("an ensemble needs at least two models, got " + std::to_string(members_.size()));
  if (weights_.size() != members_.size() || target_vocab_sizes.size() != members_.size())
    throw Error("an ensemble needs one weight and one vocabulary size per model");
  double total = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    if (!(weights_[i] > 0) || !std::isfinite(weights_[i]))
      throw Error("ensemble weight " + std::to_string(i + 1) + " must be a finite number > 0, got " +
                  std::to_string(weights_[i]));
    total += weights_[i];
  }
  for (double& w : weights_) w /= total;
  for (size_t i = 1; i < members_.size(); ++i)
    if (target_vocab_sizes[i] != target_vocab_sizes[0])
      throw Error("ensemble model " + std::to_string(i + 1) + " has a target vocabulary of " +
                  std::to_string(target_vocab_sizes[i]) + " ids, model 1 of " +
                  std::to_string(target_vocab_sizes[0]) +
                  ": an ensemble's models must share their target vocabulary");
  for (size_t i = 0; i < members_.size(); ++i)
    register_module("member" + std::to_string(i), members_[i]);
}

torch::Tensor EnsembleModel::forward(const torch::Tensor& inputs, const torch::Tensor& targets) {
  torch::Tensor sum;
  for (size_t i = 0; i < members_.size(); ++i) {
    auto lp = torch::log_softmax(members_[i]->forward(inputs, targets).to(torch::kFloat), -1) *
              weights_[i];
    sum = sum.defined() ? sum + lp : lp;
  }
  return sum;
}

torch::Tensor EnsembleModel::forward_labelled(const torch::Tensor& inputs,
                                              const torch::Tensor& targets) {
  torch::Tensor sum;
  for (size_t i = 0; i < members_.size(); ++i) {
    auto lp =
        torch::log_softmax(members_[i]->forward_labelled(inputs, targets).to(torch::kFloat), -1) *
        weights_[i];
    sum = sum.defined() ? sum + lp : lp;
  }
  return sum;
}

std::pair<torch::Tensor, torch::Tensor> EnsembleModel::forward_labelled_with_attention(
    const torch::Tensor& inputs, const torch::Tensor& targets, const AttentionProbe& probe) {
  torch::Tensor sum, attention;
  for (size_t i = 0; i < members_.size(); ++i) {
    auto [logits, a] = members_[i]->forward_labelled_with_attention(inputs, targets, probe);
    auto lp = torch::log_softmax(logits.to(torch::kFloat), -1) * weights_[i];
    sum = sum.defined() ? sum + lp : lp;
    a = a * weights_[i];
    attention = attention.defined() ? attention + a : a;
  }
  return {sum, attention};
}

bool EnsembleModel::reports_attention() const {
  for (const auto& m : members_)
    if (!m->reports_attention()) return false;
  return true;
}

std::unique_ptr<DecoderState> EnsembleModel::start_decoding(const torch::Tensor& inputs) {
  auto state = std::make_unique<EnsembleState>();
  for (auto& m : members_) state->members.push_back(m->start_decoding(inputs));
  state->mirror_first();
  return state;
}

torch::Tensor EnsembleModel::decode_step(DecoderState& base, const torch::Tensor& last_ids) {
  auto& state = dynamic_cast<EnsembleState&>(base);
  torch::NoGradGuard no_grad;
  torch::Tensor sum, attention;
  for (size_t i = 0; i < members_.size(); ++i) {
    DecoderState& member = *state.members[i];
    member.probe = state.probe;
    // One pass each to weigh and add: at a small model's size the
    // vocabulary-wide passes are a good part of a step.
    const auto lp = torch::log_softmax(members_[i]->decode_step(member, last_ids), -1);
    if (sum.defined())
      sum.add_(lp, weights_[i]);
    else
      sum = lp.mul_(weights_[i]);
    if (state.probe) {
      auto a = member.attention * weights_[i];
      attention = attention.defined() ? attention + a : a;
    }
  }
  state.attention = attention;
  ++state.length;
  return sum;
}

void EnsembleModel::reorder_state(DecoderState& base, const torch::Tensor& index) {
  auto& state = dynamic_cast<EnsembleState&>(base);
  for (size_t i = 0; i < members_.size(); ++i) members_[i]->reorder_state(*state.members[i], index);
  state.mirror_first();
}

}  // namespace t2t
