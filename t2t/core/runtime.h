// Process-wide run-time settings of LibTorch: threads, device, seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

// libgomp reads OMP_WAIT_POLICY before main(), and its default (spinning)
// lets idle OpenMP workers take cores from the matrix products. If unset,
// this sets it to PASSIVE and re-executes the program; else it returns.
void ensure_runtime_environment(int argc, char** argv);

// Turns off LibTorch's C++ backtraces in errors and warnings, which bury
// the message, unless TORCH_SHOW_CPP_STACKTRACES=1.
void quiet_library_backtraces();

// The running binary's path, for executing it again under its own name
// (exec'ing "/proc/self/exe" would rename the process "exe"); that path
// when it cannot be read.
std::string self_executable();

// The processes whose parent is `parent`, from /proc (empty where unreadable).
std::vector<int> child_processes(int parent);

// Loads LibTorch's CUDA half (cuda_loader.h) when there is an NVIDIA driver.
// LibTorch decides once whether CUDA is there, so a program that may use a
// GPU calls this before any other LibTorch call.
void prepare_cuda();

// The single place that sets LibTorch's intra-op thread count (and the
// OpenMP/MKL pools under it). threads <= 0 means all cores.
int set_num_threads(int threads);

// "auto" (CUDA when available), "cpu", "cuda" or "cuda:N" -> the canonical
// device ("cpu", "cuda:0"). Throws OptionError naming device when CUDA is
// asked for but absent.
std::string resolve_device(const std::string& device);

// CUDA devices this process can use (0 without CUDA). Use it, not
// torch::cuda::is_available(), which is false until the CUDA half loads.
int cuda_device_count();

// Seeds LibTorch's generators (CPU and CUDA) and the C++ ones t2t uses.
void seed_everything(uint64_t seed);

// A one-line description: LibTorch version, CUDA availability, threads.
std::string runtime_summary();

}  // namespace t2t
