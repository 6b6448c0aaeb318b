// Process-wide run-time settings of LibTorch: threads, device, seed. Every
// command sets them here, once, from its flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

// libgomp reads OMP_WAIT_POLICY when it is loaded, i.e. before main(). Its
// default (active spinning) lets idle OpenMP workers take the cores away
// from the matrix products, which costs 30-40% in training on small
// machines. If the variable is unset, this sets it to PASSIVE and re-executes
// the program so that the setting takes effect; otherwise it returns.
void ensure_runtime_environment(int argc, char** argv);

// LibTorch's errors carry a C++ backtrace, and some of its warnings print
// one (c10d's store, when a peer's connection closes): dozens of lines of
// library frames that bury the message itself. This turns the capture off
// for the whole process, unless TORCH_SHOW_CPP_STACKTRACES=1 asks for it.
void quiet_library_backtraces();

// The running binary's own path (from /proc/self/exe), for executing it
// again: exec'ed by this name, a process keeps its name ("t2t-trainer"),
// which pgrep, pkill, top and process exporters look for, where exec'ing
// "/proc/self/exe" itself would rename it "exe". "/proc/self/exe" when the
// path cannot be read or the file is gone.
std::string self_executable();

// The processes whose parent is `parent`, from /proc (empty where it cannot
// be read): a launcher's workers, to pass a stop on to.
std::vector<int> child_processes(int parent);

// Loads LibTorch's CUDA half (cuda_loader.h) when this machine has an NVIDIA
// driver, and does nothing otherwise. LibTorch decides once, the first time
// anything asks (seeding does), whether CUDA is there: every program that
// may use a GPU calls this first, before any other LibTorch call.
void prepare_cuda();

// The single place that sets LibTorch's intra-op thread count (and the
// OpenMP/MKL pools under it). threads <= 0 means all cores.
int set_num_threads(int threads);

// Resolves the device option: "auto" (CUDA when available, else CPU),
// "cpu", "cuda" or "cuda:N". Throws OptionError naming device when CUDA is
// asked for but absent.
// Returns the canonical device string ("cpu", "cuda:0"). Loads LibTorch's
// CUDA half (cuda_loader.h) when a GPU is asked for, or may be found.
std::string resolve_device(const std::string& device);

// CUDA devices this process can use (0 without CUDA). Loads the CUDA half
// when an NVIDIA driver is present; use it, not torch::cuda::is_available(),
// which answers false until then.
int cuda_device_count();

// Seeds LibTorch's generators (CPU and CUDA) and the C++ ones t2t uses.
void seed_everything(uint64_t seed);

// A one-line description: LibTorch version, CUDA availability, threads.
std::string runtime_summary();

}  // namespace t2t
