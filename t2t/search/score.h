// Teacher-forced scoring of given translations (T2T's --score_file).
#pragma once

#include <ATen/core/Tensor.h>

#include "t2t/model/attention_probe.h"

namespace t2t {

class T2TModel;

// inputs [batch, input_len] and targets [batch, target_len], int64, 0-padded,
// on the model's device, each target ending in EOS -> [batch] float64 on the
// CPU: per row, the sum of its target ids' natural-log probabilities (EOS
// included, no label smoothing). The model must be in eval() mode.
// With `probe`, `attention` receives the probed encoder-decoder attention,
// [batch, target_len, input_len] float32 on the CPU.
at::Tensor target_log_probs(T2TModel& model, const at::Tensor& inputs, const at::Tensor& targets,
                            const AttentionProbe* probe = nullptr,
                            at::Tensor* attention = nullptr);

}  // namespace t2t
