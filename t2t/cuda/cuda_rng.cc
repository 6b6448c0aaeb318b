// libt2t_cuda.so's CUDA generator state (t2t/core/cuda_rng_entry_points.h).
#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <mutex>

#include "t2t/core/cuda_rng_entry_points.h"

extern "C" __attribute__((visibility("default"))) void t2t_cuda_rng_state(int device,
                                                                           at::Tensor* out) {
  at::Generator gen = at::cuda::detail::getDefaultCUDAGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  *out = gen.get_state();
}

extern "C" __attribute__((visibility("default"))) void t2t_set_cuda_rng_state(
    int device, const at::Tensor& state) {
  at::Generator gen = at::cuda::detail::getDefaultCUDAGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

// The types the loader casts the symbols to must be these functions'.
static_assert(std::is_same_v<decltype(&t2t_cuda_rng_state), t2t::CudaRngState>);
static_assert(std::is_same_v<decltype(&t2t_set_cuda_rng_state), t2t::SetCudaRngState>);
