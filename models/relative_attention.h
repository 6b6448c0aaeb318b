// T2T's relative position self-attention (dot_product_attention_relative in
// layers/common_attention.py; Shaw et al., 2018): a learned key and value
// embedding per clipped distance from the query to the key, 2 * max + 1 of
// them shared by all heads, added to the keys' logits and to the values.
// T2T gathers a [queries, keys, depth] table of embeddings; here the query
// meets each of the 2 * max + 1 embeddings once and the logits pick theirs,
// and the weights are summed per distance before meeting the value
// embeddings: the same sums in another order.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace t2t {

// The embedding row of each (query, key) pair: clip(key - query, -max, max)
// + max, for queries at positions [first_query, first_query + queries) and
// keys at [0, keys). [queries, keys] int64 on `device`.
torch::Tensor relative_buckets(int64_t queries, int64_t keys, int64_t first_query, int64_t max,
                               const torch::Device& device);

// The same for one query at `position` ([1] int64 on the device, read there
// and not by the host, as a replayed graph needs): [1, keys].
torch::Tensor relative_buckets_at(const torch::Tensor& position, int64_t keys, int64_t max);

// Attention of q [batch, heads, queries, depth] over k and v [batch, heads,
// keys, depth]: softmax(q k^T * scale + q E_k[buckets]^T * scale) then
// weights (v + E_v[buckets]); embeddings [2 * max + 1, depth] each, buckets
// [queries, keys] as relative_buckets gives, `allowed` broadcastable to
// [batch, heads, queries, keys] (true where attention is allowed) or
// undefined. `dropout` applies to the weights, as T2T's does, when > 0.
// -> [batch, heads, queries, depth].
torch::Tensor attend_relative(const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, const torch::Tensor& key_embeddings,
                              const torch::Tensor& value_embeddings, const torch::Tensor& buckets,
                              const torch::Tensor& allowed, double scale, double dropout);

}  // namespace t2t
