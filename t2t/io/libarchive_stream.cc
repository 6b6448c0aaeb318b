// libt2t_archive.so: ArchiveStream over libarchive (see archive_stream.h).
// The only file of t2t that includes libarchive's headers.
#include <archive.h>
#include <archive_entry.h>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/io/archive_stream.h"

namespace t2t {
namespace {

const char* const kDamaged =
    "; the archive is damaged, incomplete or not an archive: delete it and download it again";

class LibarchiveStream : public ArchiveStream {
 public:
  LibarchiveStream(const std::string& path, bool raw) : path_(path) {
    a_ = archive_read_new();
    if (!a_) throw Error("cannot extract '" + path + "': libarchive is out of memory");
    archive_read_support_filter_all(a_);
    if (raw)
      archive_read_support_format_raw(a_);
    else
      archive_read_support_format_all(a_);
    if (archive_read_open_filename(a_, path.c_str(), 1 << 16) != ARCHIVE_OK) {
      // The destructor does not run for a throwing constructor.
      const std::string message = error_message();
      archive_read_free(a_);
      throw Error(message);
    }
  }
  ~LibarchiveStream() override { archive_read_free(a_); }
  LibarchiveStream(const LibarchiveStream&) = delete;
  LibarchiveStream& operator=(const LibarchiveStream&) = delete;

  bool next(ArchiveEntry& out) override {
    archive_entry* entry = nullptr;
    const int r = archive_read_next_header(a_, &entry);
    if (r == ARCHIVE_EOF) return false;
    if (r == ARCHIVE_WARN)
      spdlog::warn("{}: {}", path_, archive_error_string(a_) ? archive_error_string(a_) : "");
    else if (r != ARCHIVE_OK)
      throw Error(error_message());
    out = ArchiveEntry{};
    if (const char* name = archive_entry_pathname(entry)) {
      out.has_name = true;
      out.name = name;
    }
    if (const char* link = archive_entry_hardlink(entry)) {
      out.is_hardlink = true;
      out.hardlink = link;
    }
    if (const char* target = archive_entry_symlink(entry)) {
      out.has_symlink = true;
      out.symlink = target;
    }
    switch (archive_entry_filetype(entry)) {
      case AE_IFREG: out.type = ArchiveEntry::Type::kFile; break;
      case AE_IFDIR: out.type = ArchiveEntry::Type::kDirectory; break;
      case AE_IFLNK: out.type = ArchiveEntry::Type::kSymlink; break;
      default: out.type = ArchiveEntry::Type::kOther; break;
    }
    out.perm = static_cast<int>(archive_entry_perm(entry));
    return true;
  }

  size_t read(char* buffer, size_t size) override {
    for (;;) {
      const la_ssize_t n = archive_read_data(a_, buffer, size);
      if (n >= 0) return static_cast<size_t>(n);
      if (n != ARCHIVE_WARN) throw Error(error_message());
    }
  }

 private:
  std::string error_message() const {
    const char* msg = archive_error_string(a_);
    return "cannot extract '" + path_ + "': " + (msg ? msg : "unknown libarchive error") +
           kDamaged;
  }

  std::string path_;
  archive* a_ = nullptr;
};

}  // namespace
}  // namespace t2t

extern "C" __attribute__((visibility("default"))) t2t::ArchiveStream* t2t_open_archive_stream(
    const std::string& path, bool raw) {
  return new t2t::LibarchiveStream(path, raw);
}
