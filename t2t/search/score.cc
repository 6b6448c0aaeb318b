#include "t2t/search/score.h"

#include <torch/torch.h>

#include "t2t/model/t2t_model.h"

namespace t2t {

at::Tensor target_log_probs(T2TModel& model, const at::Tensor& inputs, const at::Tensor& targets,
                            const AttentionProbe* probe, at::Tensor* attention) {
  TORCH_CHECK(inputs.dim() == 2 && targets.dim() == 2 && inputs.size(0) == targets.size(0),
              "target_log_probs: inputs and targets must be [batch, length] with the same batch, "
              "got ", inputs.sizes(), " and ", targets.sizes());
  torch::NoGradGuard no_grad;
  // Only the labelled positions reach the softmax projection: the padding
  // of a batch of unequal targets costs no vocabulary-sized work.
  const auto positions = labelled_positions(targets);  // flat, row-major
  torch::Tensor logits;
  if (probe) {
    auto [labelled, weights] = model.forward_labelled_with_attention(inputs, targets, *probe);
    logits = labelled.to(torch::kFloat);
    if (attention) *attention = weights.to(torch::kCPU, torch::kFloat).contiguous();
  } else {
    logits = model.forward_labelled(inputs, targets).to(torch::kFloat);
  }
  const auto ids = targets.reshape({-1}).index_select(0, positions);
  const auto token = torch::log_softmax(logits, -1).gather(1, ids.unsqueeze(1)).squeeze(1);
  const auto rows = positions.div(targets.size(1), "floor");
  return torch::zeros({targets.size(0)}, token.options().dtype(torch::kDouble))
      .index_add_(0, rows, token.to(torch::kDouble))
      .to(torch::kCPU);
}

}  // namespace t2t
