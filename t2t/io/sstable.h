// LevelDB's table format as TensorFlow writes it (tensorflow/core/lib/io/
// table*): the container of a checkpoint's `.index` file. Only what
// checkpoints use is read and written: uncompressed blocks, every entry in
// key order; the metaindex (filters) is ignored, and written empty.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t2t {

// Calls `fn(key, value)` for every entry of the table whose whole contents
// are `table`, in key order. Every block's CRC, every length, offset and
// varint is checked, and keys must strictly increase, so that a damaged file
// throws t2t::Error (naming `path`) instead of being read as something else.
// The views passed to `fn` live as long as `table` and the key until the next
// call.
void for_each_sstable_entry(std::string_view table, const std::string& path,
                            const std::function<void(std::string_view key,
                                                     std::string_view value)>& fn);

// A whole table holding `entries` (keys strictly increasing, else
// t2t::Error): one data block, an empty metaindex, an index and the footer,
// each block with its CRC-32C, as TensorFlow's table reader expects.
std::string make_sstable(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace t2t
