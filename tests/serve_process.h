// A t2t-serve process for the end-to-end tests, started the way a user
// starts it: the real binary on an ephemeral loopback port (--port=0), its
// log in a file, stopped with a signal.
#pragma once

#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

namespace t2t::test {

class ServeProcess {
 public:
  // Runs "./t2t-serve <args> --port=0" from the build directory, waits for
  // its "listening on" line and, unless `wait_ready` is false, for GET
  // /ready to answer 200. ok() tells whether it got there; log() says why not.
  ServeProcess(const std::string& args, const std::string& log_path, bool wait_ready = true,
               double timeout_s = 120)
      : log_path_(log_path) {
    const std::string command = "cd '" T2T_BIN_DIR "' && exec ./t2t-serve " + args +
                                " --port=0 >'" + log_path + "' 2>&1";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    while (std::chrono::steady_clock::now() < deadline && exited() < 0) {
      std::smatch m;
      const std::string text = log();
      if (port_ == 0 && std::regex_search(text, m, listening)) port_ = std::stoi(m[1]);
      if (port_ != 0) {
        if (!wait_ready) break;
        httplib::Client client("127.0.0.1", port_);
        auto res = client.Get("/ready");
        if (res && res->status == 200) {
          ready_ = true;
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  ~ServeProcess() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  bool ok() const { return ready_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  std::string log() const {
    std::ifstream in(log_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // The exit status once the process has ended (128 + signal if killed),
  // or -1 while it runs.
  int exited() {
    if (exit_code_ >= 0) return exit_code_;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }

  // Sends `signal` and waits up to timeout_s for the exit status (-1: still running).
  int stop(int signal = SIGTERM, double timeout_s = 60) {
    if (exited() >= 0) return exit_code_;
    ::kill(pid_, signal);
    return wait_exit(timeout_s);
  }

  int wait_exit(double timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (exited() < 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return exit_code_;
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  bool ready_ = false;
  int exit_code_ = -1;
};

}  // namespace t2t::test
