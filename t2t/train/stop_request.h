// Stopping a training run from outside without losing work: SIGINT (Ctrl-C)
// or SIGTERM (kill, a scheduler's pre-emption) asks the run to stop; the
// training loop looks once per step, saves a checkpoint at the step it is
// at and ends normally. A second signal of that kind ends the process at
// once, as the signal's default action does (a shell then reports 130 for
// SIGINT, 143 for SIGTERM); but one within a second of the first, whoever
// sends it, is the same stop arriving twice (Ctrl-C reaches a whole process
// group, torchrun passes it on to its workers as well, and coreutils'
// timeout signals its child and then its own process group).
//
// With --worker_gpu the launching process passes each SIGINT/SIGTERM it
// gets on to its workers as SIGUSR1 (forward_stops_to_workers), and a
// worker counts those apart from the signals it gets itself: Ctrl-C reaches
// the launcher and every worker at once, and must count once, not twice.
//
// Only a program installs handlers (t2t-trainer does); the library only
// asks stop_requested().
#pragma once

#include <memory>
#include <string>

namespace t2t {

// Installs the handlers for SIGINT, SIGTERM and SIGUSR1. The handlers only
// touch lock-free atomics, write(2) one line to stderr and, for a second
// signal, re-raise it with its default action.
void install_stop_handlers();

// Whether a stop was asked for (a signal, or request_stop()). Cheap: one
// atomic load.
bool stop_requested();

// What asked: "SIGINT", "SIGTERM", "a stop passed on by the launcher" or
// "a request"; empty when nothing did.
std::string stop_reason();

// Asks for a stop as a first signal would (for tests and embedders).
void request_stop();

// Forgets any request (for tests).
void clear_stop_request();

// While one lives, the process has trained nothing a checkpoint would keep
// (it is meeting the other workers, loading its checkpoint): a stop signal
// ends it at once, saying so, rather than wait for a first step that may
// be minutes away (a worker stuck meeting a peer that failed). Not in a
// launcher, which lets its workers decide.
class StopAtOnce {
 public:
  StopAtOnce();
  ~StopAtOnce();
  StopAtOnce(const StopAtOnce&) = delete;
  StopAtOnce& operator=(const StopAtOnce&) = delete;
};

// In a process that starts worker processes and waits for them: passes
// every SIGINT/SIGTERM this process receives on to its child processes as
// SIGUSR1, from a thread of its own, until destroyed. Needs
// install_stop_handlers(). Makes SIGUSR1 ignored in this process (and in
// the workers until they install their own handlers), so a stop passed on
// while a worker is still starting does not kill it.
class StopForwarder {
 public:
  StopForwarder();
  ~StopForwarder();
  StopForwarder(const StopForwarder&) = delete;
  StopForwarder& operator=(const StopForwarder&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace t2t
