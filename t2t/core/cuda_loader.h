// LibTorch's CUDA half (libtorch_cuda.so and the CUDA libraries under it:
// cuBLAS, cuDNN, NCCL, ...) loaded only where a GPU can be used.
//
// Loaded with the rest, they add ~250 MiB of resident memory to every
// process, a CPU decoder's included, for nothing. libt2t and the binaries
// therefore link only LibTorch's CPU half; this loads the CUDA half on
// demand (it registers its kernels and hooks with LibTorch as it loads, as
// PyTorch's own extension modules do), together with libt2t_cuda.so, t2t's
// own code that calls into it (the NCCL process group). When to call it is
// runtime.h's business (prepare_cuda, resolve_device).
#pragma once

#include <string>

namespace t2t {

// Whether this machine has an NVIDIA driver (its device nodes or /proc
// entry), i.e. whether looking for a GPU can find one. Cheap; loads nothing.
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
