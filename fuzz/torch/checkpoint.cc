// A t2t checkpoint (a LibTorch archive) read as a resumed run reads it: its
// tensors in place, its nested archives (the optimizer's) rebuilt. In
// fuzz/torch/ since it needs LibTorch, whose zip reader and unpickler run
// uninstrumented: the fuzzer's coverage is t2t's side of the reading.
#include <ATen/ATen.h>
#include <torch/serialize/input-archive.h>

#include "fuzz/fuzz_target.h"
#include "t2t/checkpoint/mapped_archive.h"
#include "t2t/core/error.h"

T2T_FUZZ_TARGET(checkpoint) {
  const std::string path = t2t::fuzz::scratch_file("model.ckpt-1.pt", data);
  try {
    t2t::NestedArchives nested;
    const auto tensors = t2t::read_mapped_archive(path, &nested);
    // Every tensor lies within its record: reading each whole never faults.
    for (const auto& [key, tensor] : tensors) (void)tensor.clone();
    for (const auto& [key, archive] : nested)
      for (const std::string& name : archive->keys()) {
        at::Tensor t;
        if (archive->try_read(name, t)) (void)t.clone();
      }
  } catch (const t2t::Error&) {
  }
}
