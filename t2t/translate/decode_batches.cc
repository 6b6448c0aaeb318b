#include "t2t/translate/decode_batches.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "t2t/core/error.h"
#include "t2t/text/text_encoder.h"

namespace t2t {

bool is_empty_source(const std::vector<int64_t>& ids) {
  return ids.empty() || (ids.size() == 1 && ids[0] == kEosId);
}

std::vector<std::vector<int64_t>> decode_batches(const std::vector<std::vector<int64_t>>& sources,
                                                 int64_t batch_size, int64_t batch_tokens) {
  if (batch_size < 1) throw Error("decode batch size must be at least 1, got " +
                                  std::to_string(batch_size));
  std::vector<int64_t> order;
  for (size_t i = 0; i < sources.size(); ++i)
    if (!is_empty_source(sources[i])) order.push_back(static_cast<int64_t>(i));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return sources[a].size() > sources[b].size();
  });
  std::vector<std::vector<int64_t>> batches;
  if (batch_tokens > 0) {
    for (int64_t i : order) {
      // Longest first: a batch's first sentence is its widest.
      if (batches.empty() ||
          static_cast<int64_t>(batches.back().size() + 1) *
                  static_cast<int64_t>(sources[batches.back()[0]].size()) >
              batch_tokens)
        batches.emplace_back();
      batches.back().push_back(i);
    }
    return batches;
  }
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(batch_size)) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(batch_size));
    batches.emplace_back(order.begin() + start, order.begin() + end);
  }
  return batches;
}

at::Tensor padded_batch(const std::vector<std::vector<int64_t>>& sources,
                        const std::vector<int64_t>& rows) {
  size_t width = 0;
  for (int64_t r : rows) width = std::max(width, sources[r].size());
  auto batch = at::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)},
                         at::kLong);
  auto acc = batch.accessor<int64_t, 2>();
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& ids = sources[rows[i]];
    for (size_t t = 0; t < ids.size(); ++t) acc[static_cast<int64_t>(i)][t] = ids[t];
  }
  return batch;
}

}  // namespace t2t
