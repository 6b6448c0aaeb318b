// Helpers of the offline datagen tests: the records a problem's shards hold.
// (The raw files the problem reads are written with test_util.h's
// write_text.)
#pragma once

#include <cstdint>
#include <string>

#include "t2t/data/problem.h"
#include "t2t/io/tfrecord.h"

namespace t2t::test {

// The records in every shard of one split of `problem` in `data_dir`.
inline int64_t records(const std::string& data_dir, const std::string& problem,
                       const std::string& split) {
  int64_t n = 0;
  for (const auto& p : create_problem(problem)->data_filepaths(data_dir, split))
    n += count_tfrecords(p);
  return n;
}

}  // namespace t2t::test
