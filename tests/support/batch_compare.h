// Comparing the batches a reader hands out, for the batching tests.
#pragma once

#include "t2t/data/batching.h"

namespace t2t::test {

// Whether `a` and `b` hold the same ids in the same shapes and count the
// same tokens.
inline bool same_batch(const Batch& a, const Batch& b) {
  return a.inputs.sizes() == b.inputs.sizes() && a.targets.sizes() == b.targets.sizes() &&
         a.inputs.equal(b.inputs) && a.targets.equal(b.targets) &&
         a.input_tokens == b.input_tokens && a.target_tokens == b.target_tokens;
}

}  // namespace t2t::test
