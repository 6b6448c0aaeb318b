// A TensorFlow checkpoint: its .index (SSTable of BundleEntryProtos) and one
// data shard, the input split at "T2TFUZZDATA" into the two files.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/io/tf_checkpoint.h"

T2T_FUZZ_TARGET(tf_checkpoint) {
  const auto [index, shard] = t2t::fuzz::split_once(data, "T2TFUZZDATA");
  t2t::fuzz::scratch_file("model.ckpt-1.index", index);
  t2t::fuzz::scratch_file("model.ckpt-1.data-00000-of-00001", shard);
  try {
    t2t::TFCheckpointReader reader(t2t::fuzz::scratch_dir() + "/model.ckpt-1");
    for (const std::string& name : reader.names()) {
      try {
        reader.entry(name);
        // Every tensor's bytes come from the shard: never more than it holds.
        if (reader.read_bytes(name).size() > shard.size()) __builtin_trap();
        reader.read_floats(name);
      } catch (const t2t::Error&) {
      }
    }
  } catch (const t2t::Error&) {
  }
}
