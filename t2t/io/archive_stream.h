// The seam between archive.cc and libt2t_archive.so, the libarchive module
// loaded on first use (module_loader.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace t2t {

// One entry of an archive, as libarchive reports it.
struct ArchiveEntry {
  enum class Type { kFile, kDirectory, kSymlink, kOther };
  Type type = Type::kOther;
  bool has_name = false;  // false: the entry's name could not be read
  std::string name;
  bool is_hardlink = false;
  std::string hardlink;   // the earlier entry this one is a hard link to
  bool has_symlink = false;
  std::string symlink;    // a symbolic link's target
  int perm = 0644;
};

// Reads one archive (or, raw, one compressed stream) entry by entry. Errors
// are t2t::Error naming the file.
class ArchiveStream {
 public:
  virtual ~ArchiveStream() = default;
  // Moves to the next entry; false at the end.
  virtual bool next(ArchiveEntry& entry) = 0;
  // Up to `size` bytes of the current entry's data; 0 at its end.
  virtual size_t read(char* buffer, size_t size) = 0;
};

// The module's entry point: a stream over `path` (raw: one compressed
// stream, no entries).
using OpenArchiveStreamFn = ArchiveStream* (*)(const std::string& path, bool raw);
inline constexpr const char* kOpenArchiveStream = "t2t_open_archive_stream";

// Opens `path` through the module, loading it on first use. Throws
// t2t::Error saying what to install when libarchive cannot be loaded.
std::unique_ptr<ArchiveStream> open_archive_stream(const std::string& path, bool raw);

}  // namespace t2t
