// Drawing the next token at random, T2T's sampling_method=random.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "t2t/search/search_options.h"

namespace t2t {

// The number in [0, 1) the sentence keyed `key` (its position in the
// caller's input) draws at `step`: a hash of the three alone, so a sample
// does not depend on its batch or the order batches run in.
double sample_uniform(uint64_t seed, int64_t key, int64_t step);

// logits [rows, vocab] -> ids [rows] int64 on the logits' device: the
// argmax without options.draws(), else the first id whose cumulative
// probability under softmax(logits / temperature) over the keep_top_k
// highest logits (ties kept) exceeds uniforms[r] (float64 [rows]; may be
// undefined without draws()). Summed in float64; an id of probability 0 is
// never drawn.
at::Tensor sample_ids(const at::Tensor& logits, const SamplingOptions& options,
                      const at::Tensor& uniforms);

}  // namespace t2t
