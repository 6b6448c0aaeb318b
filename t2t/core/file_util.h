// File helpers that keep a crash from leaving half-written results behind.
#pragma once

#include <string>

namespace t2t {

// Reads a whole file; throws t2t::Error naming the path when it cannot.
std::string read_file(const std::string& path);

// Writes `content` to `path` through a temporary file in the same directory
// and a rename, so readers see either the old file or the complete new one.
// Creates missing parent directories.
void write_file_atomic(const std::string& path, const std::string& content);

// A temporary name beside `path`, unique to this process and call.
std::string temp_path_for(const std::string& path);

}  // namespace t2t
