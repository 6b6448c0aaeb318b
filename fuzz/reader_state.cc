// The data reader's saved position (reader_state.yaml beside checkpoints).
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/data/reader_state.h"

T2T_FUZZ_TARGET(reader_state) {
  try {
    const auto state = t2t::ReaderState::from_yaml(std::string(data), "reader_state.yaml");
    state.check_belongs_to(state.num_files, state.worker, state.num_workers, state.training);
    state.check_batch_rows();
  } catch (const t2t::Error&) {
  }
}
