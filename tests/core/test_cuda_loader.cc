// LibTorch's CUDA half is loaded on demand (t2t/core/cuda_loader.h): a CPU
// run leaves it out, a GPU request loads it and t2t's CUDA module with it.
// LibTorch first: its logging header defines CHECK too, and Catch's must win.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <fstream>
#include <string>

#include "t2t/core/cuda_loader.h"
#include "t2t/core/runtime.h"
#include "t2t/distributed/nccl_entry_point.h"
#include "tests/support/test_util.h"

namespace {

// Whether a shared object whose file name contains `name` is mapped.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

// Needs a process that has not asked for CUDA yet: ctest runs each test
// case in a process of its own, and in a whole-binary run no test before
// this one loads CUDA (the one after it does).
TEST_CASE("a CPU run does not load LibTorch's CUDA libraries", "[cuda_loader]") {
  if (t2t::nvidia_driver_present()) T2T_SKIP("an NVIDIA driver is present: auto may load CUDA");
  CHECK(t2t::resolve_device("cpu") == "cpu");
  CHECK(t2t::resolve_device("auto") == "cpu");
  CHECK(t2t::cuda_device_count() == 0);
  CHECK_FALSE(t2t::cuda_loaded());
  CHECK_FALSE(mapped("libtorch_cuda.so"));
  CHECK_FALSE(mapped("libcublas"));
  CHECK(t2t::runtime_summary().find("CUDA not loaded") != std::string::npos);
}

TEST_CASE("asking for CUDA loads LibTorch's CUDA half and t2t's CUDA module", "[cuda_loader]") {
  torch::Tensor probe = torch::zeros({1});  // LibTorch's CPU half is up
  const std::string why = t2t::load_cuda();
  if (!why.empty() && why.find("has no CUDA") != std::string::npos) T2T_SKIP(why);
  REQUIRE(why.empty());
  CHECK(t2t::cuda_loaded());
  CHECK(at::globalContext().hasCUDART());  // its hooks registered as it loaded
  CHECK(mapped("libtorch_cuda.so"));
  CHECK(mapped("libt2t_cuda.so"));
  CHECK(t2t::cuda_module_symbol(t2t::kMakeNcclBackend) != nullptr);
  if (torch::cuda::is_available()) {
    CHECK(t2t::resolve_device("cuda") == "cuda:0");
  } else {
    CHECK_THROWS_WITH(t2t::resolve_device("cuda"), Catch::Contains("no CUDA device is available"));
    CHECK(t2t::runtime_summary().find("CUDA loaded, no GPU visible") != std::string::npos);
  }
}
