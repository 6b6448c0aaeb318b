// Teacher-forced scoring of given translations (T2T's --score_file).
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

class T2TModel;

// inputs [batch, input_len] and targets [batch, target_len], int64, 0-padded,
// on the model's device, each target ending in EOS -> [batch] float64 on the
// CPU: per row, the sum of its target ids' natural-log probabilities (EOS
// included, no label smoothing). The model must be in eval() mode.
at::Tensor target_log_probs(T2TModel& model, const at::Tensor& inputs, const at::Tensor& targets);

}  // namespace t2t
