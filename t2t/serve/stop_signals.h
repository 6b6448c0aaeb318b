// SIGTERM and SIGINT as a call on a thread of our own. A signal handler may
// only do async-signal-safe things, so the handler writes the signal's
// number to a pipe and this object's thread, reading it, makes the call.
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace t2t {

class StopSignals {
 public:
  // Installs the handlers (and ignores SIGPIPE: a client gone mid-answer is
  // an error return, not a kill). `on_signal` gets "SIGTERM" or "SIGINT",
  // once per signal received. One instance at a time. Throws t2t::Error
  // when the pipe cannot be made.
  explicit StopSignals(std::function<void(const std::string&)> on_signal);
  // Ends the thread; signals that come later are dropped.
  ~StopSignals();

  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::thread thread_;
};

}  // namespace t2t
