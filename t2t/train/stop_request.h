// Stopping a training run from outside without losing work: SIGINT or
// SIGTERM asks the run to stop; the training loop looks once per step,
// saves a checkpoint and ends normally. A second signal ends the process
// at once by the signal's default action, unless it comes within a second
// of the first: then it is the same stop arriving twice (Ctrl-C reaches a
// whole process group; launchers pass signals on).
//
// A launcher passes stops on to its workers as SIGUSR1, which a worker
// counts apart from the signals it gets itself, so one Ctrl-C counts once.
// Only a program installs handlers; the library only asks stop_requested().
#pragma once

#include <memory>
#include <string>

namespace t2t {

// Installs the handlers for SIGINT, SIGTERM and SIGUSR1 (async-signal-safe:
// atomics and write(2) only).
void install_stop_handlers();

// Whether a stop was asked for (a signal, or request_stop()); one atomic
// load.
bool stop_requested();

// What asked: "SIGINT", "SIGTERM", "a stop passed on by the launcher" or
// "a request"; empty when nothing did.
std::string stop_reason();

// Asks for a stop as a first signal would (for tests and embedders).
void request_stop();

// Forgets any request (for tests).
void clear_stop_request();

// While one lives, the process has nothing a checkpoint would keep (it is
// meeting the other workers, loading): a stop signal ends it at once,
// rather than wait for a first step that may never come. Not in a launcher.
class StopAtOnce {
 public:
  StopAtOnce();
  ~StopAtOnce();
  StopAtOnce(const StopAtOnce&) = delete;
  StopAtOnce& operator=(const StopAtOnce&) = delete;
};

// In a launcher: passes every SIGINT/SIGTERM on to the child processes as
// SIGUSR1, from its own thread, until destroyed. Needs
// install_stop_handlers(). Ignores SIGUSR1 here (and in workers until they
// install handlers), so a stop does not kill a worker still starting.
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
