// libt2t_cuda.so's CUDA generator state (cuda_rng.h).
#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <cstring>
#include <mutex>

#include "t2t/cuda/cuda_rng.h"

extern "C" __attribute__((visibility("default"))) void t2t_cuda_rng_state(int device,
                                                                           std::string* out) {
  at::Generator gen = at::cuda::detail::getDefaultCUDAGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  const at::Tensor state = gen.get_state().contiguous();  // bytes, on the CPU
  out->assign(reinterpret_cast<const char*>(state.data_ptr()), static_cast<size_t>(state.nbytes()));
}

extern "C" __attribute__((visibility("default"))) void t2t_set_cuda_rng_state(
    int device, const std::string& state) {
  at::Generator gen = at::cuda::detail::getDefaultCUDAGenerator(device);
  at::Tensor bytes = at::empty({static_cast<int64_t>(state.size())}, at::kByte);
  if (!state.empty()) std::memcpy(bytes.data_ptr(), state.data(), state.size());
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(bytes);
}

// The types the loader casts the symbols to must be these functions'.
static_assert(std::is_same_v<decltype(&t2t_cuda_rng_state), t2t::CudaRngState>);
static_assert(std::is_same_v<decltype(&t2t_set_cuda_rng_state), t2t::SetCudaRngState>);
