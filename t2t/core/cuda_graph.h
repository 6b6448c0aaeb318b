// CUDA graphs (at::cuda::CUDAGraph, in libt2t_cuda.so). A graph replays the
// same kernels on the same memory: its owner copies new inputs into the
// tensors the capture read, and reads results from those it wrote.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/StreamGuard.h>

#include <functional>
#include <memory>

namespace t2t {

class CudaGraph {
 public:
  // Captures what `body` queues on `device`'s current stream, which must not
  // be its default one (UseSideStream). Nothing runs during the capture;
  // the body must not read the device, allocate outside the caching
  // allocator or synchronize. Throws t2t::Error naming the body's failure.
  static std::unique_ptr<CudaGraph> capture(const c10::Device& device,
                                            const std::function<void()>& body);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Queues the captured work on the current stream.
  void replay();

 private:
  explicit CudaGraph(void* graph) : graph_(graph) {}
  void* graph_;
};

// For its lifetime, a pool stream is `device`'s current stream (graphs are
// captured off the default stream). The device is synchronized on the way
// in and out.
class UseSideStream {
 public:
  explicit UseSideStream(const c10::Device& device);
  ~UseSideStream();
  UseSideStream(const UseSideStream&) = delete;
  UseSideStream& operator=(const UseSideStream&) = delete;

 private:
  c10::Device device_;
  c10::StreamGuard guard_;
};

}  // namespace t2t
