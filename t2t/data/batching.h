// Batching as T2T does it (utils/data_reader.py: batching_scheme,
// bucket_by_sequence_length): length buckets, each with its own examples
// per batch, padded into int64 batches.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace t2t {

class HParams;

// T2T's default length-bucket boundaries: x = min_length_bucket, then
// x = max(x + 1, int(x * length_bucket_step)) while x < max_length.
// Bucket i holds lengths in [boundaries[i-1], boundaries[i]); the first
// starts at 0, the last is open-ended.
std::vector<int64_t> bucket_boundaries(int64_t max_length, int64_t min_length_bucket = 8,
                                       double length_bucket_step = 1.1);

struct BatchingScheme {
  std::vector<int64_t> boundaries;
  // One per bucket (boundaries.size() + 1): examples per batch.
  std::vector<int64_t> batch_sizes;
  // Examples longer than this are dropped in training (and in evaluation
  // when asked to); already batch_size when the hparam max_length is 0.
  int64_t max_length = 0;
  // Examples shorter than this are always dropped.
  int64_t min_length = 0;

  // The bucket an example of `length` tokens goes to.
  size_t bucket(int64_t length) const;
};

// T2T's rule: batch_size counts tokens; each bucket gets
// max(1, batch_size // its upper bound) examples (batch_size // max_length
// for the last), rounded down to a divisor of the largest highly composite
// number <= 3 * the largest of those, times shard_multiplier. max_length 0
// means batch_size. Throws t2t::Error for batch_size < 1, step <= 1 or
// max_length < min_length.
BatchingScheme batching_scheme(int64_t batch_size, int64_t max_length,
                               int64_t min_length_bucket = 8, double length_bucket_step = 1.1,
                               int64_t min_length = 0, int64_t shard_multiplier = 1);

// From the hparams; with use_fixed_batch_size, batch_size counts examples
// in a single bucket.
BatchingScheme batching_scheme(const HParams& hp, int64_t shard_multiplier = 1);

struct Batch {
  // [batch, max input length in the batch], int64, padded with 0. Width 0
  // when the examples have no "inputs" feature.
  at::Tensor inputs;
  // [batch, max target length in the batch], int64, padded with 0.
  at::Tensor targets;
  // [links, 3] int64 (row, target position, input position): the word
  // alignments of guided-alignment training, carried to tokens. Undefined
  // when no example of the batch has an "alignment" feature.
  at::Tensor alignment;
  int64_t input_tokens = 0;   // non-padding tokens in inputs
  int64_t target_tokens = 0;  // non-padding tokens in targets
  int64_t size() const;       // examples
};

}  // namespace t2t
