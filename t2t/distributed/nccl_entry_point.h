// libt2t_cuda.so's entry point that makes NCCL process groups (reached
// through cuda_module_symbol()).
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace t2t {

// Makes the NCCL process group of one worker over `store`; throws on
// failure (or when this build has no NCCL).
using MakeNcclBackend = void (*)(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                 int world_size, std::chrono::milliseconds timeout,
                                 c10::intrusive_ptr<c10d::Backend>* out);
inline constexpr const char* kMakeNcclBackend = "t2t_make_nccl_backend";

}  // namespace t2t
