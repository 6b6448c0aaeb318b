// The training loss's CPU kernel: label-smoothed cross entropy over a
// vocabulary in one pass forward and one backward, where composing ATen
// operations (log_softmax, gather, the smoothing term and their gradients)
// makes six or more passes over [tokens, vocab].
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

// Sum over rows r with ids[r] != 0 of the cross entropy between
// softmax(logits[r]) and the target putting `confidence` on ids[r] and `low`
// on every other id (confidence + (vocab - 1) * low = 1). Rows with id 0
// add nothing and get a zero gradient. Differentiable with respect to
// logits.
//   logits: [rows, vocab] float32 on the CPU; ids: [rows] int64 in [0, vocab)
// Returns a float32 scalar.
at::Tensor smoothed_xent_sum_cpu(const at::Tensor& logits, const at::Tensor& ids,
                                 double confidence, double low);

}  // namespace t2t
