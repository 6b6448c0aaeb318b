// Label-smoothed cross entropy on the CPU in one pass forward and one
// backward, where composed ATen operations make several passes over
// [tokens, vocab].
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

// Sum over rows with ids[r] != 0 of the cross entropy between
// softmax(logits[r]) and `confidence` on ids[r], `low` on every other id.
// Rows with id 0 get a zero gradient. Differentiable in logits.
//   logits: [rows, vocab] float32 on the CPU; ids: [rows] int64 in [0, vocab)
// Returns a float32 scalar.
at::Tensor smoothed_xent_sum_cpu(const at::Tensor& logits, const at::Tensor& ids,
                                 double confidence, double low);

}  // namespace t2t
