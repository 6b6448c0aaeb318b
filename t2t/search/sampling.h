// Drawing the next token at random, T2T's sampling_method=random for greedy
// decoding: a named op of its own, so that its distribution can be checked
// on hand-made logits, apart from any model or search.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "t2t/search/search_options.h"

namespace t2t {

// The number in [0, 1) that the sentence keyed `key` (its position in the
// caller's input) draws at decoding step `step` under `seed`: a hash of the
// three and nothing else. A sentence's sample therefore depends neither on
// its batch nor on the other sentences nor on the order batches run in;
// only on its own logits, which a batch changes by rounding at most.
double sample_uniform(uint64_t seed, int64_t key, int64_t step);

// logits [rows, vocab] -> ids [rows] int64 on the logits' device. Without
// options.draws() the argmax. Else row r takes the first id whose
// cumulative probability under softmax(logits / temperature), renormalised
// over the keep_top_k highest logits (ties with the k-th highest kept too;
// -1 or >= vocab: every id), exceeds uniforms[r]: uniforms [rows] in [0, 1)
// (float64, any device; unused and may be undefined without draws()).
// Computed in float64 so that a draw does not hinge on float32 rounding of
// the cumulative sums; an id of probability 0 is never drawn.
at::Tensor sample_ids(const at::Tensor& logits, const SamplingOptions& options,
                      const at::Tensor& uniforms);

}  // namespace t2t
