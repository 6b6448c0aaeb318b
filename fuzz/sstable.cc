// The SSTable index of a TensorFlow checkpoint (LevelDB's table format).
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/io/sstable.h"

T2T_FUZZ_TARGET(sstable) {
  try {
    size_t total = 0;
    t2t::for_each_sstable_entry(data, "fuzz.index", [&](std::string_view key, std::string_view value) {
      total += key.size() + value.size();
    });
  } catch (const t2t::Error&) {
  }
}
