// Unpacking downloaded datasets (tar, tar.gz, tar.bz2, tar.xz, zip, 7z, ...)
// with libarchive. Entries that would land outside the destination (absolute
// paths, '..') are refused, and every file appears under its final name only
// once complete, so an interrupted run leaves no half-written files behind.
#pragma once

#include <string>
#include <vector>

namespace t2t {

// Extracts every entry of the archive into dest_dir (created if missing) and
// returns the paths, relative to dest_dir, of the files written, in archive
// order. Symbolic links are made only when they point inside dest_dir
// (relative, no '..'); others, and special files, are skipped with a warning.
// Throws t2t::Error naming the archive when it cannot be read or is damaged,
// or naming the entry when its path is unsafe.
std::vector<std::string> extract_archive(const std::string& archive_path,
                                         const std::string& dest_dir);

// extract_archive, skipped when an earlier call extracted this archive into
// dest_dir and all its files are still there: a completed extraction leaves a
// marker file in dest_dir listing them. Returns the same list either way.
std::vector<std::string> maybe_extract_archive(const std::string& archive_path,
                                               const std::string& dest_dir);

// The marker maybe_extract_archive writes for this archive in dest_dir.
std::string extraction_marker_path(const std::string& archive_path, const std::string& dest_dir);

// Extracts the one file `member` (a path inside the archive; a leading "./"
// does not matter) to dest_path. Throws t2t::Error naming the archive and
// the member when there is no such file.
void extract_archive_member(const std::string& archive_path, const std::string& member,
                            const std::string& dest_path);

// Decompresses a single compressed file (.gz, .bz2, .xz, .zst, ...; not an
// archive of several files) to dest_path. An uncompressed file is copied.
void decompress_file(const std::string& src_path, const std::string& dest_path);

}  // namespace t2t
