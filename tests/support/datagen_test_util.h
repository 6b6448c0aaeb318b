// Helpers of the offline datagen tests: raw files written where a problem
// looks for them, and the records its shards hold.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "t2t/data/problem.h"
#include "t2t/io/tfrecord.h"

namespace t2t::test {

// Writes `text` to `path`, creating its directory.
inline void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The records in every shard of one split of `problem` in `data_dir`.
inline int64_t records(const std::string& data_dir, const std::string& problem,
                       const std::string& split) {
  int64_t n = 0;
  for (const auto& p : create_problem(problem)->data_filepaths(data_dir, split))
    n += count_tfrecords(p);
  return n;
}

}  // namespace t2t::test
