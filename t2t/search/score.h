// Teacher-forced scoring of given translations: how likely the model finds
// a target given its input, T2T's --score_file. The op is kept apart from
// the file handling (score_file.h) so that a test can hold it against the
// model's own forward().
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

class T2TModel;

// inputs [batch, input_len] and targets [batch, target_len], int64, 0-padded,
// on the model's device, each target ending in EOS -> [batch] float64 on the
// CPU: per row, the sum over its target ids (EOS included) of the model's
// natural-log probability of that id given the input and the ids before it
// (teacher forcing, no label smoothing): <= 0, higher is likelier. The
// model must be in eval() mode.
at::Tensor target_log_probs(T2TModel& model, const at::Tensor& inputs, const at::Tensor& targets);

}  // namespace t2t
