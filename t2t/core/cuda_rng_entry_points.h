// libt2t_cuda.so's entry points for the CUDA random generator, which
// libt2t's checkpoint code reaches through cuda_module_symbol()
// (cuda_loader.h).
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

// The state of device `device`'s default CUDA generator (dropout on that GPU
// draws from it), a uint8 tensor on the CPU as the CPU generator's is, and
// back; what a checkpoint keeps so that a resumed CUDA run draws the masks
// an uninterrupted one would. Both throw on failure (setting a tensor that
// is no such state).
using CudaRngState = void (*)(int device, at::Tensor* out);
inline constexpr const char* kCudaRngState = "t2t_cuda_rng_state";
using SetCudaRngState = void (*)(int device, const at::Tensor& state);
inline constexpr const char* kSetCudaRngState = "t2t_set_cuda_rng_state";

}  // namespace t2t
