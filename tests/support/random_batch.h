// Random id batches for the training tests: ids in [2, vocab) with ragged
// zero padding at the row ends (row r loses r % 3 input and r % 2 target
// positions), token counts filled in. Include after <torch/torch.h>.
#pragma once

#include <algorithm>
#include <vector>

#include "t2t/data/batching.h"

namespace t2t::test {

inline Batch random_batch(uint64_t seed, int64_t vocab, int64_t rows, int64_t in_len,
                          int64_t out_len) {
  torch::manual_seed(seed);
  auto inputs = torch::randint(2, vocab, {rows, in_len}, torch::kInt64);
  auto targets = torch::randint(2, vocab, {rows, out_len}, torch::kInt64);
  for (int64_t r = 0; r < rows; ++r) {
    inputs.index_put_({r, torch::indexing::Slice(in_len - r % 3, torch::indexing::None)}, 0);
    targets.index_put_({r, torch::indexing::Slice(out_len - r % 2, torch::indexing::None)}, 0);
  }
  Batch b;
  b.inputs = inputs;
  b.targets = targets;
  b.input_tokens = inputs.ne(0).sum().item<int64_t>();
  b.target_tokens = targets.ne(0).sum().item<int64_t>();
  return b;
}

// Rows of ids as one [rows, longest] batch, zero-padded at the ends.
inline torch::Tensor padded_ids(const std::vector<std::vector<int64_t>>& rows) {
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  auto out = torch::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)},
                          torch::kLong);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) out[r][c] = rows[r][c];
  return out;
}

}  // namespace t2t::test
