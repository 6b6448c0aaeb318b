// Helpers shared by the tests: running the built binaries, temporary dirs,
// reading and writing files, skipping a test whose dependency is missing.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

// Ends the running test case as skipped, saying why: for a test whose
// dependency (a GPU, a Python package, data, a command) is missing. Catch2 v2
// has no skip of its own, so the reason goes out as a warning that starts
// with T2T_TEST_SKIP_MARKER; tests/CMakeLists.txt registers every test with
// that marker as SKIP_REGULAR_EXPRESSION, so CTest counts the test as
// skipped instead of passed. Use it in the TEST_CASE's own body (it
// returns from it) and before any check, since a matched marker hides the
// test's result. `reason` may stream, as in WARN: "no data at " << dir.
// (catch.hpp is left to the test file, which orders it after LibTorch's
// headers so that Catch's CHECK wins.)
#define T2T_SKIP(reason)                        \
  do {                                          \
    WARN(T2T_TEST_SKIP_MARKER ": " << reason);  \
    return;                                     \
  } while (false)

namespace t2t::test {

// Under ThreadSanitizer everything runs many times slower, OpenMP's
// spinning threads and process start-up most: tests that wait on other
// processes scale their limits by this.
#if defined(__SANITIZE_THREAD__)
inline constexpr double kSanitizerSlowdown = 10;
#else
inline constexpr double kSanitizerSlowdown = 1;
#endif

// Where the binaries under test are: $T2T_TEST_BIN_DIR, else the build
// directory this test binary was built in. An installed tree's launcher
// (cmake/T2TInstall.cmake) points it at the tree's bin/.
inline std::string bin_dir() {
  const char* dir = std::getenv("T2T_TEST_BIN_DIR");
  return dir && *dir ? dir : T2T_BUILD_BIN_DIR;
}

// The t2t checkout whose fixtures, sample data and scripts the tests read:
// $T2T_TEST_SOURCE_DIR, else the one this test binary was built from.
inline std::string source_dir() {
  const char* dir = std::getenv("T2T_TEST_SOURCE_DIR");
  return dir && *dir ? dir : T2T_BUILD_SOURCE_DIR;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `command` is run by /bin/sh from the build directory, so "./t2t-trainer"
// names the binary under test.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  const std::string full = "cd '" + bin_dir() + "' && " + command + " 2>&1";
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// A fresh directory per test under the system's temp dir, removed afterwards.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("t2t_test_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  // T2T_TEST_KEEP=1 keeps it, to read what a test left (logs, runs).
  ~TempDir() {
    const char* keep = std::getenv("T2T_TEST_KEEP");
    if (!keep || std::string(keep) != "1") std::filesystem::remove_all(path);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// The lines of a text file, without their '\n'.
inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Writes `lines` to `path`, one a line, creating its directory.
inline void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path, std::ios::binary);
  for (const auto& l : lines) out << l << "\n";
}

// The bytes of a file; empty if it cannot be read.
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` to `path` as it is, creating its directory.
inline void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The checkpoint file t2t-trainer writes into `dir` at `step`.
inline std::string ckpt(const std::string& dir, int64_t step) {
  return (std::filesystem::path(dir) / ("model.ckpt-" + std::to_string(step) + ".pt")).string();
}

}  // namespace t2t::test
