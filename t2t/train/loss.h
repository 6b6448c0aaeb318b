// The training loss and teacher-forced metrics as T2T computes them for
// symbol targets (layers/common_layers.py). Id 0 is padding and never
// counts. Sums and counts, not means, so that data-parallel workers add
// them before dividing (weighted by tokens, as T2T weights its shards).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace t2t {

struct LossSum {
  at::Tensor loss_sum;    // scalar, float32 (float64 for float64 logits)
  at::Tensor weight_sum;  // scalar, same dtype: the number of non-pad labels
};

// Label-smoothed cross entropy over the non-pad positions.
//   logits: [batch, length, vocab], any floating type (half and bfloat16 are
//           computed in float32)
//   labels: [batch, length], integer ids, 0 = padding
// 1 - label_smoothing on the gold id, label_smoothing / (vocab - 1) on each
// other; that distribution's entropy is subtracted, so a perfect prediction
// costs 0. Differentiable in logits. Throws t2t::Error on bad shapes,
// vocab < 2 or label_smoothing outside [0, 1].
LossSum smoothed_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                               double label_smoothing);

// Marian's guided-alignment cost (its "ce"): for every target position
// with links, minus the mean over its linked input positions of
// log(attention + 1e-6), summed over those positions, so that it adds to
// a summed loss as one more term per aligned target token.
//   attention: [batch, target_length, input_length], any floating type
//   links: [links, 3] int64 (row, target position, input position), on
//          attention's device (Batch::alignment)
// loss_sum: the cost, a float32 scalar differentiable in attention (0
// without links); weight_sum: the aligned target positions. Links
// must lie within attention (the reader's do; checking would make a CUDA
// step wait); bad shapes throw t2t::Error.
LossSum guided_alignment_cost(const at::Tensor& attention, const at::Tensor& links);

struct AccuracyCounts {
  at::Tensor correct;  // scalar int64
  at::Tensor total;    // scalar int64
};

// Positions (label != 0) where the arg-max of logits is the label.
//   logits: [batch, length, vocab]; labels: [batch, length]
AccuracyCounts padded_accuracy(const at::Tensor& logits, const at::Tensor& labels);

// Positions (label != 0) whose label is among the k highest logits
// (k is capped at the vocabulary size). T2T's accuracy_top5 is k = 5.
AccuracyCounts padded_accuracy_topk(const at::Tensor& logits, const at::Tensor& labels,
                                    int64_t k = 5);

// Sequences whose every non-pad position is predicted right (arg-max),
// out of all sequences in the batch (T2T's accuracy_per_sequence).
AccuracyCounts padded_sequence_accuracy(const at::Tensor& logits, const at::Tensor& labels);

}  // namespace t2t
