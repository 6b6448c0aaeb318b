#include "models/relative_attention.h"

#include <limits>

#include "t2t/kernels/dropout.h"

namespace t2t {

torch::Tensor relative_buckets(int64_t queries, int64_t keys, int64_t first_query, int64_t max,
                               const torch::Device& device) {
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(device);
  const auto key = torch::arange(keys, options).unsqueeze(0);
  const auto query = torch::arange(first_query, first_query + queries, options).unsqueeze(1);
  return (key - query).clamp_(-max, max).add_(max);
}

torch::Tensor relative_buckets_at(const torch::Tensor& position, int64_t keys, int64_t max) {
  const auto key = torch::arange(keys, position.options().dtype(torch::kLong)).unsqueeze(0);
  return (key - position.view({1, 1})).clamp_(-max, max).add_(max);
}

torch::Tensor attend_relative(const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, const torch::Tensor& key_embeddings,
                              const torch::Tensor& value_embeddings, const torch::Tensor& buckets,
                              const torch::Tensor& allowed, double scale, double dropout) {
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), keys = k.size(2);
  const int64_t distances = key_embeddings.size(0);
  TORCH_CHECK(buckets.size(0) == queries && buckets.size(1) == keys, "attend_relative: buckets ",
              buckets.sizes(), " for ", queries, " queries and ", keys, " keys");
  const auto index = buckets.expand({batch, heads, queries, keys});
  // T2T scales the queries before both products.
  const auto scaled = q * scale;
  auto scores = torch::matmul(scaled, k.transpose(-2, -1)) +
                torch::matmul(scaled, key_embeddings.to(q.scalar_type()).t()).gather(-1, index);
  if (allowed.defined())
    scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<float>::infinity());
  auto weights = torch::softmax(scores, -1, torch::kFloat).to(v.scalar_type());
  if (dropout > 0) weights = t2t::dropout(weights, dropout, true);
  // Each key's weight joins its distance's: keys beyond the clipping
  // distance share one value embedding.
  const auto per_distance =
      torch::zeros({batch, heads, queries, distances}, weights.options()).scatter_add(-1, index,
                                                                                     weights);
  return torch::matmul(weights, v) +
         torch::matmul(per_distance, value_embeddings.to(v.scalar_type()));
}

}  // namespace t2t
