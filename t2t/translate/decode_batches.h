// How the decoder groups sources into batches (shared with the decoding
// benchmark, so both run the same batches).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace t2t {

// A source with nothing to translate: no ids, or EOS alone.
bool is_empty_source(const std::vector<int64_t>& ids);

// Source indices in batches of at most batch_size, longest first (stable),
// as T2T orders them. Empty sources are left out. With batch_tokens > 0 a
// batch is counted in tokens instead: sentences join it while their number
// times its longest stays within batch_tokens (one longer sentence alone).
std::vector<std::vector<int64_t>> decode_batches(const std::vector<std::vector<int64_t>>& sources,
                                                 int64_t batch_size, int64_t batch_tokens = 0);

// The sources at `rows` as one int64 [rows, longest] tensor padded with 0.
at::Tensor padded_batch(const std::vector<std::vector<int64_t>>& sources,
                        const std::vector<int64_t>& rows);

}  // namespace t2t
