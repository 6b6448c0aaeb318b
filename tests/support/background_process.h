// A binary of the build started in the background the way a user starts it
// (a shell command run from the build directory), its output in a log file,
// for the end-to-end tests that watch a process and signal it. Killed when
// the test ends if it is still running.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "tests/support/test_util.h"

namespace t2t::test {

class BackgroundProcess {
 public:
  // Runs `command` (e.g. "./t2t-trainer --output_dir=...") from t2t::test::bin_dir(),
  // stdout and stderr into `log_path`.
  BackgroundProcess(const std::string& command, const std::string& log_path)
      : log_path_(log_path) {
    const std::string full =
        "cd '" + t2t::test::bin_dir() + "' && exec " + command + " >'" + log_path + "' 2>&1";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  ~BackgroundProcess() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }

  std::string log() const { return file_bytes(log_path_); }

  // Waits until the log matches `pattern` (true), or the process ends or
  // `timeout_s` passes (false).
  bool wait_for(const std::string& pattern, double timeout_s = 60) {
    const std::regex re(pattern);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::regex_search(log(), re)) return true;
      if (exited() >= 0) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  void signal(int sig) { ::kill(pid_, sig); }

  // The exit status once the process has ended (128 + signal if killed by
  // one), or -1 while it runs.
  int exited() {
    if (exit_code_ >= 0) return exit_code_;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }

  // Waits up to timeout_s for the exit status (-1: still running).
  int wait_exit(double timeout_s = 60) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (exited() < 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return exit_code_;
  }

  // Sends `sig` and waits up to timeout_s for the exit status.
  int stop(int sig = SIGTERM, double timeout_s = 60) {
    if (exited() >= 0) return exit_code_;
    ::kill(pid_, sig);
    return wait_exit(timeout_s);
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

}  // namespace t2t::test
