// Writes encoded examples into sharded TFRecord files, in parallel and
// shuffled within each shard, without holding the corpus in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t2t/data/samples.h"

namespace t2t {

struct EncodedExample {
  std::string record;  // a serialized tf.train.Example
  int64_t input_tokens = 0;
  int64_t target_tokens = 0;
};

// Must be safe to call from several threads at once.
using PairEncoder = std::function<EncodedExample(const TextPair&)>;

struct ShardWriteResult {
  int64_t examples = 0;
  int64_t input_tokens = 0;
  int64_t target_tokens = 0;
  double seconds = 0;
};

// Encodes pairs on `threads` workers (0: all cores) and deals them
// round-robin, in input order, into a temporary file per shard; each shard
// is then shuffled in memory (seeded from `seed` and its index) and renamed
// into place. Existing shards are left alone; with no examples, nothing is
// renamed.
ShardWriteResult write_shuffled_shards(SampleStream& stream, const PairEncoder& encode,
                                       const std::vector<std::string>& paths, int threads,
                                       uint64_t seed);

}  // namespace t2t
