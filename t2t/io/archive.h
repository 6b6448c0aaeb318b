// Unpacking downloaded datasets with libarchive. Entries that would land
// outside the destination are refused; files appear under their final name
// only once complete.
#pragma once

#include <string>
#include <vector>

namespace t2t {

// Extracts the archive into dest_dir (created if missing); returns the
// files written, relative to dest_dir, in archive order. Symbolic links
// pointing outside dest_dir, and special files, are skipped with a warning.
// Throws t2t::Error naming the archive when it cannot be read, or the entry
// when its path is unsafe.
std::vector<std::string> extract_archive(const std::string& archive_path,
                                         const std::string& dest_dir);

// extract_archive, skipped when the marker of an earlier extraction lists
// files that are all still there.
std::vector<std::string> maybe_extract_archive(const std::string& archive_path,
                                               const std::string& dest_dir);

// The marker maybe_extract_archive writes for this archive in dest_dir.
std::string extraction_marker_path(const std::string& archive_path, const std::string& dest_dir);

// Extracts the file `member` (a leading "./" ignored) to dest_path. Throws
// t2t::Error naming the archive and member when there is none.
void extract_archive_member(const std::string& archive_path, const std::string& member,
                            const std::string& dest_path);

// Decompresses one compressed file (.gz, .bz2, .xz, ...) to dest_path; an
// uncompressed one is copied.
void decompress_file(const std::string& src_path, const std::string& dest_path);

}  // namespace t2t
