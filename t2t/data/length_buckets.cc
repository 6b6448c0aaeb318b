// LengthBuckets (length_buckets.h) and the padding of examples into batches.
#include "t2t/data/length_buckets.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/data/batching.h"

namespace t2t {

namespace {

int64_t count_nonpad(const std::vector<int64_t>& v) {
  return static_cast<int64_t>(v.size()) - std::count(v.begin(), v.end(), int64_t{0});
}

}  // namespace

void pad_batch(std::vector<DecodedExample>* examples, Batch* batch,
               std::vector<RecordAddress>* rows) {
  const int64_t n = static_cast<int64_t>(examples->size());
  size_t in_len = 0, out_len = 0;
  for (const DecodedExample& e : *examples) {
    in_len = std::max(in_len, e.inputs.size());
    out_len = std::max(out_len, e.targets.size());
  }
  batch->inputs = at::zeros({n, static_cast<int64_t>(in_len)}, at::kLong);
  batch->targets = at::zeros({n, static_cast<int64_t>(out_len)}, at::kLong);
  int64_t* in = batch->inputs.data_ptr<int64_t>();
  int64_t* out = batch->targets.data_ptr<int64_t>();
  batch->input_tokens = batch->target_tokens = 0;
  for (int64_t i = 0; i < n; ++i) {
    const DecodedExample& e = (*examples)[static_cast<size_t>(i)];
    if (!e.inputs.empty())
      std::memcpy(in + i * in_len, e.inputs.data(), e.inputs.size() * sizeof(int64_t));
    if (!e.targets.empty())
      std::memcpy(out + i * out_len, e.targets.data(), e.targets.size() * sizeof(int64_t));
    batch->input_tokens += count_nonpad(e.inputs);
    batch->target_tokens += count_nonpad(e.targets);
  }
  int64_t links = 0;
  bool aligned = false;
  for (const DecodedExample& e : *examples) {
    aligned = aligned || e.aligned;
    links += static_cast<int64_t>(e.alignment.size() / 2);
  }
  batch->alignment = at::Tensor();
  if (aligned) {
    batch->alignment = at::empty({links, 3}, at::kLong);
    int64_t* a = batch->alignment.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const auto& flat = (*examples)[static_cast<size_t>(i)].alignment;
      for (size_t k = 0; k + 1 < flat.size(); k += 2) {
        *a++ = i;
        *a++ = flat[k + 1];
        *a++ = flat[k];
      }
    }
  }
  if (rows) {
    rows->clear();
    for (const DecodedExample& e : *examples) rows->push_back(e.address);
  }
  examples->clear();
}

LengthBuckets::LengthBuckets(const BatchingScheme& scheme)
    : scheme_(scheme), buckets_(scheme.batch_sizes.size()) {}

bool LengthBuckets::add(DecodedExample&& ex, Batch* batch, std::vector<RecordAddress>* rows) {
  const size_t b = scheme_.bucket(ex.length);
  auto& bucket = buckets_[b];
  bucket.push_back(std::move(ex));
  if (static_cast<int64_t>(bucket.size()) < scheme_.batch_sizes[b]) return false;
  pad_batch(&bucket, batch, rows);
  return true;
}

bool LengthBuckets::flush(Batch* batch, std::vector<RecordAddress>* rows) {
  for (auto& bucket : buckets_) {
    if (bucket.empty()) continue;
    pad_batch(&bucket, batch, rows);
    return true;
  }
  return false;
}

void LengthBuckets::append_addresses(std::vector<RecordAddress>* out) const {
  for (const auto& bucket : buckets_)
    for (const DecodedExample& e : bucket) out->push_back(e.address);
}

void LengthBuckets::restore(std::vector<DecodedExample> examples) {
  for (DecodedExample& e : examples) buckets_[scheme_.bucket(e.length)].push_back(std::move(e));
  for (size_t b = 0; b < buckets_.size(); ++b)
    if (static_cast<int64_t>(buckets_[b].size()) >= scheme_.batch_sizes[b])
      throw Error("reader state does not fit this reader: bucket " + std::to_string(b) +
                  " would hold a full batch; was it saved with another batching scheme?");
}

}  // namespace t2t
