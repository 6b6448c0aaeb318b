// libt2t_cuda.so's CUDA graphs (t2t/core/cuda_graph_entry_points.h).
#include "t2t/core/cuda_graph_entry_points.h"

#include <ATen/cuda/CUDAGraph.h>

#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

namespace {

at::cuda::MempoolId_t shared_pool(int device) {
  static std::mutex mutex;
  static std::map<int, at::cuda::MempoolId_t> pools;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = pools.find(device);
  if (it == pools.end()) it = pools.emplace(device, at::cuda::graph_pool_handle()).first;
  return it->second;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void t2t_capture_cuda_graph(
    int device, const std::function<void()>* body, void** graph) {
  auto captured = std::make_unique<at::cuda::CUDAGraph>();
  // The default generator takes part by itself: dropout draws new masks at
  // every replay.
  captured->capture_begin(shared_pool(device));
  try {
    (*body)();
  } catch (...) {
    try {
      captured->capture_end();
    } catch (...) {
      // The body's error is the one to report.
    }
    throw;
  }
  captured->capture_end();
  *graph = captured.release();
}

extern "C" __attribute__((visibility("default"))) void t2t_replay_cuda_graph(void* graph) {
  static_cast<at::cuda::CUDAGraph*>(graph)->replay();
}

extern "C" __attribute__((visibility("default"))) void t2t_free_cuda_graph(void* graph) {
  delete static_cast<at::cuda::CUDAGraph*>(graph);
}

// The types the loader casts the symbols to must be these functions'.
static_assert(std::is_same_v<decltype(&t2t_capture_cuda_graph), t2t::CaptureCudaGraph>);
static_assert(std::is_same_v<decltype(&t2t_replay_cuda_graph), t2t::ReplayCudaGraph>);
static_assert(std::is_same_v<decltype(&t2t_free_cuda_graph), t2t::FreeCudaGraph>);
