#include "t2t/distributed/communicator.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>

#include "t2t/core/cuda_loader.h"
#include "t2t/core/error.h"
#include "t2t/cuda/cuda_module.h"

namespace t2t {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

int env_int(const char* name, int min, int max, std::optional<int> fallback) {
  auto v = env(name);
  if (!v) {
    if (fallback) return *fallback;
    throw Error(std::string("WORLD_SIZE is set but ") + name +
                " is not: a data-parallel worker needs RANK, WORLD_SIZE, MASTER_ADDR and "
                "MASTER_PORT (torchrun sets them all)");
  }
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (end == v->c_str() || *end || n < min || n > max)
    throw Error(std::string("environment variable ") + name + "=" + *v +
                " is not an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return static_cast<int>(n);
}

class Work final : public CollectiveWork {
 public:
  explicit Work(c10::intrusive_ptr<c10d::Work> work) : work_(std::move(work)) {}
  void wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      // Usually another worker died: its own message says why.
      throw Error(std::string("a collective operation failed (did another worker stop?): ") +
                  e.what());
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
};

class C10dCommunicator final : public Communicator {
 public:
  C10dCommunicator(c10::intrusive_ptr<c10d::Backend> backend, std::string name, c10::Device device)
      : backend_(std::move(backend)), name_(std::move(name)), device_(device) {}

  int rank() const override { return backend_->getRank(); }
  int size() const override { return backend_->getSize(); }
  std::string backend() const override { return name_; }
  c10::Device device() const override { return device_; }

  std::unique_ptr<CollectiveWork> all_reduce_sum_async(at::Tensor& tensor) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    return std::make_unique<Work>(backend_->allreduce(tensors, options));
  }

  void broadcast(at::Tensor& tensor, int root) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    Work(backend_->broadcast(tensors, options)).wait();
  }

  void barrier() override { Work(backend_->barrier()).wait(); }

 private:
  c10::intrusive_ptr<c10d::Backend> backend_;
  std::string name_;
  c10::Device device_;
};

}  // namespace

std::optional<WorkerEnv> worker_env_from_environment() {
  if (!env("WORLD_SIZE")) return std::nullopt;
  WorkerEnv w;
  w.world_size = env_int("WORLD_SIZE", 1, 1 << 20, std::nullopt);
  w.rank = env_int("RANK", 0, w.world_size - 1, std::nullopt);
  w.local_rank = env_int("LOCAL_RANK", 0, w.world_size - 1, w.rank);
  if (w.world_size > 1) {
    auto addr = env("MASTER_ADDR");
    if (!addr)
      throw Error("WORLD_SIZE=" + std::to_string(w.world_size) +
                  " but MASTER_ADDR is not set: the address of the rank-0 machine is needed");
    w.master_addr = *addr;
    w.master_port = env_int("MASTER_PORT", 1, 65535, std::nullopt);
  }
  return w;
}

std::unique_ptr<Communicator> Communicator::connect(const WorkerEnv& env, const c10::Device& device,
                                                    std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = env.world_size;
  store_options.waitWorkers = true;
  store_options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    throw Error("worker " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                " could not meet the others at MASTER_ADDR:MASTER_PORT = " + env.master_addr +
                ":" + std::to_string(env.master_port) + " (" + e.what() +
                "). Check that rank 0 runs, the address is reachable and the port is free.");
  }
  if (device.is_cuda()) {
    // NCCL lives in LibTorch's CUDA half, reached through libt2t_cuda.so.
    const auto make = reinterpret_cast<MakeNcclBackend>(cuda_module_symbol(kMakeNcclBackend));
    c10::intrusive_ptr<c10d::Backend> nccl;
    make(store, env.rank, env.world_size, timeout, &nccl);
    return std::make_unique<C10dCommunicator>(std::move(nccl), "nccl", device);
  }
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // The loopback device covers one machine; across machines Gloo must use
  // an interface the others can reach, which the hostname resolves to.
  const bool local = env.master_addr == "127.0.0.1" || env.master_addr == "localhost";
  options->devices.push_back(local ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                   : c10d::ProcessGroupGloo::createDefaultDevice());
  options->threads = 2;
  auto store_gloo = c10::make_intrusive<c10d::PrefixStore>("gloo", store);
  return std::make_unique<C10dCommunicator>(
      c10::make_intrusive<c10d::ProcessGroupGloo>(store_gloo, env.rank, env.world_size, options),
      "gloo", c10::Device(c10::kCPU));
}

std::vector<std::string> Communicator::all_gather_strings(const std::string& mine) {
  // Gloo and NCCL move tensors, not strings: every worker pads its bytes to
  // the longest and the sums of one-hot slots gather them.
  at::Tensor lengths = torch::zeros({size()}, torch::kInt64);
  lengths[rank()] = static_cast<int64_t>(mine.size());
  lengths = lengths.to(device());
  all_reduce_sum(lengths);
  lengths = lengths.cpu();
  const int64_t longest = lengths.max().item<int64_t>();
  at::Tensor bytes = torch::zeros({size(), std::max<int64_t>(longest, 1)}, torch::kUInt8);
  if (!mine.empty())
    std::memcpy(bytes[rank()].data_ptr<uint8_t>(), mine.data(), mine.size());
  // uint8 sums never carry: every column has one non-zero contributor.
  bytes = bytes.to(device());
  all_reduce_sum(bytes);
  bytes = bytes.cpu();
  std::vector<std::string> out;
  for (int r = 0; r < size(); ++r)
    out.emplace_back(reinterpret_cast<const char*>(bytes[r].data_ptr<uint8_t>()),
                     static_cast<size_t>(lengths[r].item<int64_t>()));
  return out;
}

}  // namespace t2t
