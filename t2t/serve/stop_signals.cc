#include "t2t/serve/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "t2t/core/error.h"

namespace t2t {

namespace {

int g_pipe[2] = {-1, -1};
std::atomic<bool> g_closing{false};

void on_signal(int sig) {
  const int saved = errno;
  const char c = static_cast<char>(sig);
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &c, 1);
  errno = saved;
}

}  // namespace

StopSignals::StopSignals(std::function<void(const std::string&)> callback) {
  if (g_pipe[0] < 0 && ::pipe(g_pipe) != 0)
    throw Error(std::string("cannot create a pipe for SIGTERM and SIGINT: ") +
                std::strerror(errno));
  g_closing = false;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  thread_ = std::thread([callback = std::move(callback)] {
    for (;;) {
      char c = 0;
      const ssize_t n = ::read(g_pipe[0], &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || g_closing) return;
      callback(c == SIGINT ? "SIGINT" : "SIGTERM");
    }
  });
}

StopSignals::~StopSignals() {
  g_closing = true;
  on_signal(0);  // wakes the thread, which sees g_closing and ends
  thread_.join();
}

}  // namespace t2t
