// Time per LibTorch operator while an OpProfile is alive (t2t-decoder
// --profile): every op that goes through the dispatcher, on every thread,
// counted with its calls, its total time and its self time (total less the
// ops it called), and the scopes t2t marks itself with RECORD_USER_SCOPE
// (the encoder, a decoder step, the candidate scan). Built on LibTorch's
// RecordFunction callbacks, which cost nothing while no profile is alive.
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

  // A table of the `top` longest by self time with each one's share of
  // `wall_seconds` (the time the profiled work took, to put shares
  // against), then a line for the rest.
  std::string report(double wall_seconds, size_t top = 25) const;

 struct State;  // what the callbacks record into, in op_profile.cc

 private:
  std::unique_ptr<State> state_;
};

}  // namespace t2t
