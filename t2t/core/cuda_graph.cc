#include "t2t/core/cuda_graph.h"

#include <c10/core/impl/VirtualGuardImpl.h>

#include <exception>

#include "t2t/core/cuda_loader.h"
#include "t2t/core/error.h"
#include "t2t/core/cuda_graph_entry_points.h"

namespace t2t {
namespace {

c10::Device cuda_device(const c10::Device& device) {
  if (!device.is_cuda()) throw Error("a side stream is for a CUDA device, not " + device.str());
  return device.has_index() ? device : c10::Device(c10::DeviceType::CUDA, 0);
}

// What was queued on the device's streams so far has run.
c10::Stream synchronized_pool_stream(const c10::Device& device) {
  c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
  impl.synchronizeDevice(device.index());
  return impl.getStreamFromGlobalPool(device, /*isHighPriority=*/false);
}

}  // namespace

std::unique_ptr<CudaGraph> CudaGraph::capture(const c10::Device& device,
                                              const std::function<void()>& body) {
  if (!device.is_cuda()) throw Error("CUDA graphs need a CUDA device, not " + device.str());
  const auto capture_graph =
      reinterpret_cast<CaptureCudaGraph>(cuda_module_symbol(kCaptureCudaGraph));
  void* graph = nullptr;
  try {
    capture_graph(device.has_index() ? device.index() : 0, &body, &graph);
  } catch (const c10::Error& e) {
    throw Error(std::string("capturing a CUDA graph failed: ") + e.what_without_backtrace());
  }
  return std::unique_ptr<CudaGraph>(new CudaGraph(graph));
}

CudaGraph::~CudaGraph() {
  try {
    reinterpret_cast<FreeCudaGraph>(cuda_module_symbol(kFreeCudaGraph))(graph_);
  } catch (const std::exception&) {
    // The module is there (the graph came from it); nothing else can fail.
  }
}

void CudaGraph::replay() {
  reinterpret_cast<ReplayCudaGraph>(cuda_module_symbol(kReplayCudaGraph))(graph_);
}

UseSideStream::UseSideStream(const c10::Device& device)
    : device_(cuda_device(device)), guard_(synchronized_pool_stream(device_)) {}

UseSideStream::~UseSideStream() {
  c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA).synchronizeDevice(device_.index());
}

}  // namespace t2t
