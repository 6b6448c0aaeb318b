// LevelDB's table format as TensorFlow writes it (tensorflow/core/lib/io/
// table*), for a checkpoint's `.index`: uncompressed blocks only; the
// metaindex is ignored, and written empty.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t2t {

// Calls `fn(key, value)` for every entry of `table`, in key order. CRCs,
// lengths and key order are checked: a damaged file throws t2t::Error
// naming `path`. Values live as long as `table`, the key until the next call.
void for_each_sstable_entry(std::string_view table, const std::string& path,
                            const std::function<void(std::string_view key,
                                                     std::string_view value)>& fn);

// A whole table holding `entries` (keys strictly increasing, else
// t2t::Error), as TensorFlow's table reader expects.
std::string make_sstable(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace t2t
