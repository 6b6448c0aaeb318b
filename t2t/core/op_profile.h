// Time per LibTorch operator (and RECORD_USER_SCOPE scope), on every
// thread, while an OpProfile is alive; through RecordFunction callbacks,
// which cost nothing otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace t2t {

struct OpTime {
  std::string name;
  int64_t calls = 0;
  double total_seconds = 0;  // from entry to exit, callees included
  double self_seconds = 0;   // callees excluded
};

class OpProfile {
 public:
  OpProfile();  // starts recording; one profile at a time per process
  ~OpProfile();
  OpProfile(const OpProfile&) = delete;
  OpProfile& operator=(const OpProfile&) = delete;

  // What was recorded so far, by self time, longest first.
  std::vector<OpTime> times() const;

  // A table of the `top` longest by self time, each with its share of
  // `wall_seconds`, then a line for the rest.
  std::string report(double wall_seconds, size_t top = 25) const;

 struct State;  // what the callbacks record into, in op_profile.cc

 private:
  std::unique_ptr<State> state_;
};

}  // namespace t2t
