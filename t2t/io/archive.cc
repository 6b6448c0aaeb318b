#include "t2t/io/archive.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"
#include "t2t/core/module_loader.h"
#include "t2t/core/stopwatch.h"
#include "t2t/core/string_util.h"
#include "t2t/io/archive_stream.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

const char* const kDamaged =
    "; the archive is damaged, incomplete or not an archive: delete it and download it again";

// One archive being read, through the libarchive module.
class Reader {
 public:
  // raw: the input is one compressed stream, not an archive of entries.
  Reader(const std::string& path, bool raw) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      throw Error("cannot extract '" + path + "': no such file");
    if (fs::file_size(path, ec) == 0 && !raw)
      throw Error("cannot extract '" + path + "': the file is empty" + kDamaged);
    stream_ = open_archive_stream(path, raw);
  }

  // The next entry, or nullptr at the end.
  const ArchiveEntry* next() { return stream_->next(entry_) ? &entry_ : nullptr; }

  // Writes the current entry's data to `dest` through a temporary file.
  void copy_data(const std::string& dest, int mode) {
    const std::string tmp = temp_path_for(dest);
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw Error("cannot write '" + tmp + "': " + std::strerror(errno));
    struct Guard {
      std::FILE*& f;
      const std::string& tmp;
      ~Guard() {
        if (f) {
          std::fclose(f);
          std::remove(tmp.c_str());
        }
      }
    } guard{f, tmp};
    static thread_local std::vector<char> buf(size_t(1) << 16);
    // Corpora of several GB take minutes: say how far along the file is.
    Stopwatch since_log;
    int64_t written = 0;
    for (;;) {
      const size_t n = stream_->read(buf.data(), buf.size());
      if (n == 0) break;
      if (std::fwrite(buf.data(), 1, n, f) != n)
        throw Error("cannot write '" + dest + "': " + std::strerror(errno) + " (disk full?)");
      written += static_cast<int64_t>(n);
      if (since_log.seconds() > 10) {
        since_log.restart();
        spdlog::info("  extracting {}: {} MB so far", dest, written >> 20);
      }
    }
    std::FILE* done = f;
    f = nullptr;  // the guard now only removes a failed file
    if (std::fclose(done) != 0) {
      const int err = errno;
      std::remove(tmp.c_str());
      throw Error("cannot write '" + dest + "': " + std::strerror(err) + " (disk full?)");
    }
    // Keep the archive's permission bits (scripts stay executable), but
    // never make a file its owner cannot read or replace.
    std::error_code ec;
    fs::permissions(tmp, static_cast<fs::perms>((mode & 0777) | 0600), ec);
    if (std::rename(tmp.c_str(), dest.c_str()) != 0) {
      const int err = errno;
      std::remove(tmp.c_str());
      throw Error("cannot rename '" + tmp + "' to '" + dest + "': " + std::strerror(err));
    }
  }

 private:
  std::unique_ptr<ArchiveStream> stream_;
  ArchiveEntry entry_;
};

// The entry's path with "." and empty components dropped ("" for the
// archive's root directory). Throws for a path that would leave the
// destination.
std::string clean_entry_path(const std::string& archive_path, const std::string& raw) {
  const bool absolute = !raw.empty() && (raw[0] == '/' || raw[0] == '\\');
  std::vector<std::string> parts;
  bool dotdot = false;
  for (const std::string& part : split(raw, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") dotdot = true;
    parts.push_back(part);
  }
  if (absolute || dotdot)
    throw Error("archive '" + archive_path + "' has an entry '" + raw +
                "' whose path is absolute or contains '..'; refusing to write outside the "
                "destination. Do not use this archive: get it again from a trusted source");
  return join(parts, "/");
}

// A symlink is made only when it cannot point outside the destination.
bool safe_link_target(const std::string& target) {
  if (target.empty() || target[0] == '/') return false;
  for (const std::string& part : split(target, '/'))
    if (part == "..") return false;
  return true;
}

void make_parent(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    throw Error("cannot create directory '" + path.parent_path().string() + "': " + ec.message());
}

}  // namespace

std::unique_ptr<ArchiveStream> open_archive_stream(const std::string& path, bool raw) {
  static const OpenArchiveStreamFn open = [] {
    void* module;
    try {
      module = load_module("libt2t_archive.so", "t2t's archive and decompression support");
    } catch (const Error& e) {
      throw Error(std::string(e.what()) +
                  ". It needs libarchive (libarchive.so.13): on Debian or Ubuntu, "
                  "apt-get install libarchive13 (libarchive13t64 on newer releases)");
    }
    return reinterpret_cast<OpenArchiveStreamFn>(
        module_symbol(module, "libt2t_archive.so", kOpenArchiveStream));
  }();
  return std::unique_ptr<ArchiveStream>(open(path, raw));
}

std::vector<std::string> extract_archive(const std::string& archive_path,
                                         const std::string& dest_dir) {
  Reader reader(archive_path, /*raw=*/false);
  const fs::path dest(dest_dir);
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) throw Error("cannot create directory '" + dest_dir + "': " + ec.message());
  spdlog::info("Extracting {} into {}", archive_path, dest_dir);

  std::vector<std::string> written;
  while (const ArchiveEntry* entry = reader.next()) {
    if (!entry->has_name)
      throw Error("archive '" + archive_path + "' has an entry without a readable name" +
                  kDamaged);
    const std::string rel = clean_entry_path(archive_path, entry->name);
    if (rel.empty()) continue;
    const fs::path out = dest / rel;
    const auto type = entry->type;
    if (entry->is_hardlink) {
      const std::string target = clean_entry_path(archive_path, entry->hardlink);
      make_parent(out);
      fs::copy_file(dest / target, out, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        spdlog::warn("{}: skipping hard link '{}' to '{}': {}", archive_path, rel, target,
                     ec.message());
        continue;
      }
    } else if (type == ArchiveEntry::Type::kDirectory) {
      fs::create_directories(out, ec);
      if (ec) throw Error("cannot create directory '" + out.string() + "': " + ec.message());
      continue;
    } else if (type == ArchiveEntry::Type::kFile) {
      make_parent(out);
      reader.copy_data(out.string(), entry->perm);
    } else if (type == ArchiveEntry::Type::kSymlink) {
      const std::string& target = entry->symlink;
      if (!entry->has_symlink || !safe_link_target(target)) {
        spdlog::warn("{}: skipping symbolic link '{}' to '{}', which may point outside {}",
                     archive_path, rel, target, dest_dir);
        continue;
      }
      make_parent(out);
      fs::remove(out, ec);
      fs::create_symlink(target, out, ec);
      if (ec) throw Error("cannot create symbolic link '" + out.string() + "': " + ec.message());
    } else {
      spdlog::warn("{}: skipping '{}', which is not a file, directory or link", archive_path,
                   rel);
      continue;
    }
    spdlog::debug("Extracted {}", rel);
    written.push_back(rel);
  }
  spdlog::info("Extracted {} files from {}", written.size(), archive_path);
  return written;
}

std::string extraction_marker_path(const std::string& archive_path, const std::string& dest_dir) {
  return (fs::path(dest_dir) / (".t2t_extracted." + fs::path(archive_path).filename().string()))
      .string();
}

std::vector<std::string> maybe_extract_archive(const std::string& archive_path,
                                               const std::string& dest_dir) {
  const std::string marker = extraction_marker_path(archive_path, dest_dir);
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    std::vector<std::string> files;
    bool complete = true;
    for (const std::string& line : split(read_file(marker), '\n')) {
      if (line.empty()) continue;
      if (!fs::exists(fs::symlink_status(fs::path(dest_dir) / line, ec))) complete = false;
      files.push_back(line);
    }
    if (complete) {
      spdlog::info("Not extracting {}: already extracted into {}", archive_path, dest_dir);
      return files;
    }
    spdlog::info("Extracting {} again: some of its files are missing from {}", archive_path,
                 dest_dir);
  }
  std::vector<std::string> files = extract_archive(archive_path, dest_dir);
  std::string listing;
  for (const std::string& f : files) listing += f + "\n";
  write_file_atomic(marker, listing);
  return files;
}

void extract_archive_member(const std::string& archive_path, const std::string& member,
                            const std::string& dest_path) {
  const std::string wanted = clean_entry_path(archive_path, member);
  Reader reader(archive_path, /*raw=*/false);
  std::vector<std::string> names;
  while (const ArchiveEntry* entry = reader.next()) {
    // Unsafe entries other than the one asked for do no harm here.
    std::string rel;
    try {
      if (!entry->has_name) continue;
      rel = clean_entry_path(archive_path, entry->name);
    } catch (const Error&) {
      continue;
    }
    if (entry->type != ArchiveEntry::Type::kFile || entry->is_hardlink) continue;
    if (rel != wanted) {
      names.push_back(rel);
      continue;
    }
    make_parent(fs::path(dest_path));
    reader.copy_data(dest_path, entry->perm);
    return;
  }
  std::string msg = "archive '" + archive_path + "' has no file '" + member + "'";
  const auto similar = close_matches(wanted, names);
  if (!similar.empty()) msg += "; did you mean " + join(similar, ", ") + "?";
  throw Error(msg);
}

void decompress_file(const std::string& src_path, const std::string& dest_path) {
  Reader reader(src_path, /*raw=*/true);
  if (!reader.next()) throw Error("cannot decompress '" + src_path + "': it holds no data");
  make_parent(fs::path(dest_path));
  reader.copy_data(dest_path, 0644);
}

}  // namespace t2t
