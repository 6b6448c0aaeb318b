// libt2t_cuda.so's NCCL process group (t2t/distributed/nccl_entry_point.h).
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#ifdef T2T_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "t2t/core/error.h"
#include "t2t/distributed/nccl_entry_point.h"

extern "C" __attribute__((visibility("default"))) void t2t_make_nccl_backend(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size,
    std::chrono::milliseconds timeout, c10::intrusive_ptr<c10d::Backend>* out) {
#ifdef T2T_WITH_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("nccl", store);
  *out = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank, world_size, options);
#else
  (void)store, (void)rank, (void)world_size, (void)timeout, (void)out;
  throw t2t::OptionError("device", "multi-process training on CUDA needs NCCL, and this build of "
                                   "t2t was made without it (nccl.h was not found at configure "
                                   "time); use {device}=cpu (Gloo)");
#endif
}

// The type the loader casts the symbol to must be this function's.
static_assert(std::is_same_v<decltype(&t2t_make_nccl_backend), t2t::MakeNcclBackend>);
