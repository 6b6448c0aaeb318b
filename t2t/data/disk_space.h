// What a datagen run will take on disk, estimated from its text before
// anything is written, against the data directory's free space.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

// One split still to write, as estimated from its raw text.
struct SplitSize {
  std::string split;
  int shards = 1;
  int64_t pairs = 0;       // about
  int64_t text_bytes = 0;  // of those pairs, both sides, newlines included
};

struct DiskNeed {
  int64_t text_bytes = 0;   // of every split
  int64_t final_bytes = 0;  // every split's shards
  // The most held at any moment: the splits written, plus the current
  // split's temporary files and `workers` shards being shuffled from them.
  int64_t peak_bytes = 0;
};

// The encoded size of a split's shards: framing plus ids as varints
// (learned vocabularies: an id per 3-5 bytes of text; bytes: one per byte).
int64_t estimate_shard_bytes(const SplitSize& split, bool byte_vocabulary);

// The splits are written in order, one after the other.
DiskNeed estimate_disk_need(const std::vector<SplitSize>& splits, bool byte_vocabulary,
                            int workers);

enum class DiskVerdict {
  kEnough,
  kClose,  // free space below 1.5x the estimated peak: it may run out
  kShort,  // below 3/4 of it: it will, unless the estimate is far off
};
DiskVerdict judge_disk_space(int64_t peak_bytes, int64_t free_bytes);

// Logs the estimate and free space; warns when close, and throws
// t2t::Error naming the sizes when clearly short.
void check_disk_space(const std::string& data_dir, const std::vector<SplitSize>& splits,
                      bool byte_vocabulary, int workers);

// "1.5 GiB", "820 MiB", "12 KiB", "300 B".
std::string human_bytes(int64_t bytes);

}  // namespace t2t
