// WMT .sgm test sets, as datagen reads their segments.
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/data/samples.h"

T2T_FUZZ_TARGET(sgm) {
  const std::string path = t2t::fuzz::scratch_file("newstest.sgm", data);
  try {
    t2t::read_sgm_segments(path);
  } catch (const t2t::Error&) {
  }
}
