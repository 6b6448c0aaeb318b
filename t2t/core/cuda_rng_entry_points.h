// libt2t_cuda.so's entry points for the CUDA random generator.
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

// Device `device`'s default CUDA generator state as a uint8 CPU tensor, and
// back. Both throw on failure.
using CudaRngState = void (*)(int device, at::Tensor* out);
inline constexpr const char* kCudaRngState = "t2t_cuda_rng_state";
using SetCudaRngState = void (*)(int device, const at::Tensor& state);
inline constexpr const char* kSetCudaRngState = "t2t_set_cuda_rng_state";

}  // namespace t2t
