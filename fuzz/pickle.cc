// The walk over a checkpoint's pickle that runs before LibTorch's
// unpickler (t2t/checkpoint/pickle_check.h): torch-free, so it is fuzzed
// with coverage here as well as within fuzz/torch/checkpoint.cc.
#include "fuzz/fuzz_target.h"
#include "t2t/checkpoint/pickle_check.h"
#include "t2t/core/error.h"

T2T_FUZZ_TARGET(pickle) {
  try {
    t2t::check_pickle(data, "data.pkl");
  } catch (const t2t::Error&) {
  }
}
