#include "fuzz/fuzz_target.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace t2t::fuzz {

namespace {

std::vector<std::pair<std::string, Harness>>& registry() {
  static std::vector<std::pair<std::string, Harness>> all;
  return all;
}

}  // namespace

bool register_harness(const char* name, Harness harness) {
  registry().emplace_back(name, harness);
  return true;
}

const std::vector<std::pair<std::string, Harness>>& harnesses() { return registry(); }

const std::string& scratch_dir() {
  // One directory per process, removed at exit: fuzzers run millions of
  // inputs and must not leave them behind.
  // Never destroyed, so that the exit handler can still read it.
  static const std::string* dir = [] {
    auto* path = new std::string(
        (std::filesystem::temp_directory_path() / "t2t_fuzz_XXXXXX").string());
    if (!mkdtemp(path->data())) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return path;
  }();
  return *dir;
}

std::string scratch_file(const std::string& name, std::string_view data) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(data.data(), static_cast<std::streamsize>(data.size()));
  return path;
}

std::pair<std::string_view, std::string_view> split_once(std::string_view data,
                                                         std::string_view separator) {
  const size_t at = data.find(separator);
  if (at == std::string_view::npos) return {data, {}};
  return {data.substr(0, at), data.substr(at + separator.size())};
}

}  // namespace t2t::fuzz
