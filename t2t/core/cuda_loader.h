// LibTorch's CUDA half (libtorch_cuda.so and the CUDA libraries under it),
// loaded with libt2t_cuda.so only where a GPU can be used: libt2t and the
// binaries link only the CPU half, so a CPU process does not carry the CUDA
// libraries' memory. runtime.h says when (prepare_cuda, resolve_device).
#pragma once

#include <string>

namespace t2t {

// Whether this machine has an NVIDIA driver. Cheap; loads nothing.
bool nvidia_driver_present();

// Loads the CUDA half once. Returns "" on success (or when already loaded),
// else why not (this LibTorch has no CUDA, a library failed to load).
std::string load_cuda();

// Whether load_cuda() has succeeded in this process.
bool cuda_loaded();

// A symbol of libt2t_cuda.so (load_cuda() first); throws t2t::Error naming
// it when absent.
void* cuda_module_symbol(const char* name);

}  // namespace t2t
