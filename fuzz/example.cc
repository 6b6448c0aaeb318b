// tf.train.Example records as the data reader parses them from shards.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/io/example.h"

T2T_FUZZ_TARGET(example) {
  try {
    const auto features = t2t::parse_example(data);
    // What parses must serialize and parse back to the same features.
    if (t2t::parse_example(t2t::serialize_example(features)) != features) __builtin_trap();
  } catch (const t2t::Error&) {
  }
}
