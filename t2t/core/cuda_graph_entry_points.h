// libt2t_cuda.so's entry points for CUDA graphs (at::cuda::CUDAGraph), which
// libt2t reaches through cuda_graph_api() (t2t/core/cuda_graph.h).
#pragma once

#include <functional>

namespace t2t {

// Captures what `body` queues on `device`'s current (non-default) stream,
// in a memory pool all of t2t's graphs on that device share (they never run
// at once). Throws on failure, the capture ended.
using CaptureCudaGraph = void (*)(int device, const std::function<void()>* body, void** graph);
inline constexpr const char* kCaptureCudaGraph = "t2t_capture_cuda_graph";
// Runs a captured graph on the current stream.
using ReplayCudaGraph = void (*)(void* graph);
inline constexpr const char* kReplayCudaGraph = "t2t_replay_cuda_graph";
using FreeCudaGraph = void (*)(void* graph);
inline constexpr const char* kFreeCudaGraph = "t2t_free_cuda_graph";

}  // namespace t2t
