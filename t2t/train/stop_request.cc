#include "t2t/train/stop_request.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include "t2t/core/runtime.h"

namespace t2t {

namespace {

// Lock-free atomics are safe to touch in a signal handler.
std::atomic<int> g_direct{0};     // SIGINT/SIGTERM received by this process
std::atomic<int> g_forwarded{0};  // SIGUSR1: passed on by the launcher
std::atomic<int> g_requested{0};  // request_stop()
std::atomic<int> g_first_signal{0};
std::atomic<int64_t> g_first_ns{0};      // when, on the monotonic clock
std::atomic<bool> g_forwarding{false};   // this process is a launcher
std::atomic<bool> g_at_once{false};      // StopAtOnce: nothing to save yet
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

// One stop may reach a process twice within moments: Ctrl-C goes to the
// whole process group and a launcher such as torchrun passes what it got on
// to its workers; coreutils' `timeout` signals its child, then its own
// process group, which holds the child, so the same sender delivers it
// twice. Any signal within this time of the first is taken for the same
// stop, whoever sends it; one sent later stops at once.
constexpr int64_t kSameStopNs = 1000000000;

int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void say(const char* text) {
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text, std::strlen(text));
}

// The default action of `sig`, now: the handler returns, the re-raised
// signal is delivered and ends the process as if no handler had been set.
void die_of(int sig) {
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void on_signal(int sig, siginfo_t*, void*) {
  const int saved = errno;
  if (g_at_once && !g_forwarding) {
    say("t2t: stop signal while setting up, with nothing trained to save: stopping now\n");
    die_of(sig == SIGUSR1 ? SIGTERM : sig);
  }
  if (sig == SIGUSR1) {
    if (g_forwarded.fetch_add(1) + 1 >= 2) die_of(SIGTERM);
  } else {
    const int64_t now = monotonic_ns();
    if (g_direct == 0) {
      g_first_signal = sig;
      g_first_ns = now;
    } else if (now - g_first_ns < kSameStopNs) {
      errno = saved;
      return;
    }
    const int count = g_direct.fetch_add(1) + 1;
    // A launcher lets its workers decide (they get each signal passed on);
    // a third signal ends it regardless, should they hang.
    const int fatal = g_forwarding ? 3 : 2;
    if (count >= fatal) {
      say("t2t: stop signal again: stopping at once, without a checkpoint\n");
      die_of(sig);
    } else if (count == 1) {
      say(g_forwarding ? "t2t: stop signal received: passing it on to the workers, which stop "
                         "after the current step with a checkpoint (send it again, a second "
                         "or more later, to stop at once)\n"
                       : "t2t: stop signal received: stopping after the current step with a "
                         "checkpoint (send it again, a second or more later, to stop at "
                         "once)\n");
    }
  }
  errno = saved;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  sigemptyset(&action.sa_mask);
  // The handlers take turns, so that the counts stay in step; blocking
  // calls (waitpid, reads) resume after them.
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGUSR1);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGUSR1, &action, nullptr);
}

bool stop_requested() { return g_direct > 0 || g_forwarded > 0 || g_requested > 0; }

std::string stop_reason() {
  if (g_direct > 0) return g_first_signal == SIGINT ? "SIGINT" : "SIGTERM";
  if (g_forwarded > 0) return "a stop passed on by the launcher";
  if (g_requested > 0) return "a request";
  return "";
}

void request_stop() { g_requested = 1; }

void clear_stop_request() {
  g_direct = 0;
  g_forwarded = 0;
  g_requested = 0;
  g_first_signal = 0;
  g_first_ns = 0;
}

StopAtOnce::StopAtOnce() { g_at_once = true; }
StopAtOnce::~StopAtOnce() { g_at_once = false; }

struct StopForwarder::Impl {
  std::atomic<bool> done{false};
  std::thread thread;
};

StopForwarder::StopForwarder() : impl_(std::make_unique<Impl>()) {
  // Ignored, not handled: an ignored signal stays ignored across exec, so
  // a worker that has not installed its handlers yet is not killed by it.
  ::signal(SIGUSR1, SIG_IGN);
  g_forwarding = true;
  impl_->thread = std::thread([impl = impl_.get()] {
    int passed = 0;
    while (!impl->done) {
      const int received = g_direct;
      for (; passed < received; ++passed)
        for (int child : child_processes(::getpid())) ::kill(child, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

StopForwarder::~StopForwarder() {
  impl_->done = true;
  impl_->thread.join();
  g_forwarding = false;
}

}  // namespace t2t
