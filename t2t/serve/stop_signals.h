// SIGTERM and SIGINT as a call on a thread of our own: the handler writes
// to a pipe (async-signal-safe), which the thread reads.
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace t2t {

class StopSignals {
 public:
  // Installs the handlers and ignores SIGPIPE (a client gone mid-answer is
  // an error, not a kill). `on_signal` gets "SIGTERM" or "SIGINT" once per
  // signal. One instance at a time. Throws t2t::Error when the pipe cannot
  // be made.
  explicit StopSignals(std::function<void(const std::string&)> on_signal);
  // Ends the thread; signals that come later are dropped.
  ~StopSignals();

  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::thread thread_;
};

}  // namespace t2t
