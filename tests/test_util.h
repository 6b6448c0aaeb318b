// Helpers shared by the tests: running the built binaries, temporary dirs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace t2t::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `command` is run by /bin/sh from the build directory, so "./t2t-trainer"
// names the binary under test.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  const std::string full = "cd '" T2T_BIN_DIR "' && " + command + " 2>&1";
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
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace t2t::test
