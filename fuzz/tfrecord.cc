// TFRecord shards: lengths, CRCs and records, as the data reader reads them.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/io/tfrecord.h"

T2T_FUZZ_TARGET(tfrecord) {
  const std::string path = t2t::fuzz::scratch_file("shard.tfrecord", data);
  try {
    t2t::TFRecordReader reader(path);
    std::string record;
    size_t total = 0;
    while (reader.next(&record)) total += record.size();
    // Records come out of the file: never more bytes than it holds.
    if (total > data.size()) __builtin_trap();
  } catch (const t2t::Error&) {
  }
  try {
    t2t::count_tfrecords(path);
  } catch (const t2t::Error&) {
  }
}
