// Downloaded archives (tar, tar.gz, zip, gz), extracted as datagen does.
#include <filesystem>

#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/io/archive.h"

T2T_FUZZ_TARGET(archive) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(t2t::fuzz::scratch_dir()) / "archive";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  const std::string path = (dir / "download.tgz").string();
  t2t::fuzz::scratch_file("archive/download.tgz", data);
  try {
    t2t::extract_archive(path, (dir / "extracted").string());
  } catch (const t2t::Error&) {
  }
  try {
    t2t::decompress_file(path, (dir / "decompressed").string());
  } catch (const t2t::Error&) {
  }
  // Nothing may land outside the extraction directory.
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != "download.tgz" && name != "extracted" && name != "decompressed") __builtin_trap();
  }
}
