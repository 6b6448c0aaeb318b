// A t2t-serve process for the end-to-end tests, started the way a user
// starts it: the real binary on an ephemeral loopback port (--port=0), its
// log in a file, stopped with a signal.
#pragma once

#include <httplib.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "tests/support/background_process.h"
#include "tests/support/test_util.h"

namespace t2t::test {

// Under ThreadSanitizer a server starts without its warm-up (hundreds of
// decoding steps, minutes there), and gets longer to start
// (kSanitizerSlowdown).
#if defined(__SANITIZE_THREAD__)
inline constexpr const char* kServeSanitizerFlags = " --warm_up=false";
#else
inline constexpr const char* kServeSanitizerFlags = "";
#endif

class ServeProcess {
 public:
  // Runs "./t2t-serve <args> --port=0" from the build directory, waits for
  // its "listening on" line and, unless `wait_ready` is false, for GET
  // /ready to answer 200. ok() tells whether it got there; log() says why not.
  ServeProcess(const std::string& args, const std::string& log_path, bool wait_ready = true,
               double timeout_s = 120 * kSanitizerSlowdown)
      : process_("./t2t-serve " + args + " --port=0" +
                     (args.find("--warm_up") == std::string::npos ? kServeSanitizerFlags : ""),
                 log_path) {
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

  bool ok() const { return ready_; }
  int port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
  std::string log() const { return process_.log(); }
  // The exit status once the process has ended (128 + signal if killed),
  // or -1 while it runs.
  int exited() { return process_.exited(); }
  // Sends `signal` and waits up to timeout_s for the exit status (-1: still running).
  int stop(int signal = SIGTERM, double timeout_s = 60) { return process_.stop(signal, timeout_s); }
  int wait_exit(double timeout_s) { return process_.wait_exit(timeout_s); }

 private:
  BackgroundProcess process_;
  int port_ = 0;
  bool ready_ = false;
};

}  // namespace t2t::test
