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

// Reads `stream` on the calling thread, encodes pairs on `threads` workers
// (0: all cores) and deals the records round-robin into one unshuffled
// temporary file per shard, in input order whatever the thread timing. Then
// each shard (1/N of the data) is shuffled in memory with a generator seeded
// from `seed` and the shard index, written to a temporary file and renamed
// to its final path. Shards whose final file already exists are left alone.
// Logs progress every few seconds. With no examples at all, nothing is
// renamed into place.
ShardWriteResult write_shuffled_shards(SampleStream& stream, const PairEncoder& encode,
                                       const std::vector<std::string>& paths, int threads,
                                       uint64_t seed);

}  // namespace t2t
