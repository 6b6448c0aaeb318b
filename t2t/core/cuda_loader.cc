#include "t2t/core/cuda_loader.h"

#include <ATen/Context.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>

#include "t2t/core/error.h"
#include "t2t/core/module_loader.h"

namespace t2t {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> loaded_ok{false};

struct CudaLibraries {
  std::string error;  // why loading failed; empty when loaded
  void* module = nullptr;
};

const CudaLibraries& libraries() {
  static CudaLibraries loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    // LibTorch's CUDA half sits beside its CPU half (libtorch_cpu.so, which
    // holds at::globalContext); its own RUNPATH finds the CUDA libraries.
    const fs::path torch_dir = directory_of(reinterpret_cast<const void*>(&at::globalContext));
    const fs::path torch_cuda = torch_dir / "libtorch_cuda.so";
    if (torch_dir.empty() || !fs::exists(torch_cuda)) {
      loaded.error = "this LibTorch has no CUDA (no libtorch_cuda.so in " +
                     (torch_dir.empty() ? std::string("its directory") : torch_dir.string()) + ")";
      return;
    }
    // RTLD_GLOBAL: libt2t_cuda.so and LibTorch's dispatcher resolve against it.
    if (dlopen(torch_cuda.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      loaded.error = "could not load " + torch_cuda.string() + ": " + dlerror();
      return;
    }
    try {
      loaded.module = load_module("libt2t_cuda.so", "t2t's CUDA code, built beside libt2t.so");
    } catch (const Error& e) {
      loaded.error = e.what();
      return;
    }
    loaded_ok = true;
  });
  return loaded;
}

}  // namespace

bool nvidia_driver_present() {
  return access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0;
}

std::string load_cuda() { return libraries().error; }

bool cuda_loaded() { return loaded_ok; }

void* cuda_module_symbol(const char* name) {
  const auto& libs = libraries();
  if (!libs.error.empty()) throw Error("CUDA is not available: " + libs.error);
  return module_symbol(libs.module, "libt2t_cuda.so", name);
}

}  // namespace t2t
