#include "t2t/distributed/communicator.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// The local address the kernel routes to `host` from (a UDP socket's
// connect sends nothing). Throws t2t::Error naming MASTER_ADDR when it
// does not resolve or no route leads there.
std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    throw Error("MASTER_ADDR=" + host + " does not resolve to an address");
  std::string out;
  for (addrinfo* ai = found; ai && out.empty(); ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, SOCK_DGRAM, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {0};
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      const void* where = local.ss_family == AF_INET
                              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (::inet_ntop(local.ss_family, where, text, sizeof(text))) out = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (out.empty())
    throw Error("no network route from this machine to MASTER_ADDR=" + host +
                "; set GLOO_SOCKET_IFNAME to the interface the workers reach each other through");
  return out;
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

namespace {

// The first line of an exception's text: c10's errors append a C++ stack
// that says nothing to a user.
std::string first_line(const std::string& text) {
  const size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

// Where this worker's Gloo listens, which it advertises to the others.
struct GlooAddress {
  std::vector<std::string> interfaces;  // GLOO_SOCKET_IFNAME's, when set
  std::string host;                     // else this address
  std::string said;                     // for messages
};

// GLOO_SOCKET_IFNAME (interfaces, comma-separated) when set, as PyTorch
// honours it; on one machine the loopback; else the local address through
// which MASTER_ADDR is reached. Not the hostname's: in most containers and
// network namespaces it resolves to 127.0.0.1, which no other machine
// reaches.
GlooAddress gloo_address(const WorkerEnv& worker) {
  GlooAddress a;
  if (auto names = env("GLOO_SOCKET_IFNAME")) {
    std::string item;
    for (size_t i = 0; i <= names->size(); ++i) {
      if (i == names->size() || (*names)[i] == ',') {
        if (!item.empty()) a.interfaces.push_back(item);
        item.clear();
      } else {
        item += (*names)[i];
      }
    }
    a.said = "GLOO_SOCKET_IFNAME=" + *names;
    if (!a.interfaces.empty()) return a;
  }
  if (worker.master_addr == "127.0.0.1" || worker.master_addr == "localhost") {
    a.host = "127.0.0.1";
    a.said = "127.0.0.1 (MASTER_ADDR is this machine's loopback)";
    return a;
  }
  a.host = local_address_towards(worker.master_addr, worker.master_port);
  a.said = a.host + " (the address through which this machine reaches MASTER_ADDR=" +
           worker.master_addr + ")";
  return a;
}

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
  // Under torchrun the workers share the agent's store, which outlives a
  // restart of the group (--max_restarts): each attempt takes keys of its
  // own, or a restarted worker would read the dead group's addresses.
  const char* restarts = std::getenv("TORCHELASTIC_RESTART_COUNT");
  const std::string attempt = restarts && *restarts ? restarts : "0";
  if (device.is_cuda()) {
    // NCCL lives in LibTorch's CUDA half, reached through libt2t_cuda.so.
    const auto make = reinterpret_cast<MakeNcclBackend>(cuda_module_symbol(kMakeNcclBackend));
    c10::intrusive_ptr<c10d::Backend> nccl;
    make(c10::make_intrusive<c10d::PrefixStore>("nccl/" + attempt, store), env.rank,
         env.world_size, timeout, &nccl);
    return std::make_unique<C10dCommunicator>(std::move(nccl), "nccl", device);
  }
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  const GlooAddress address = gloo_address(env);
  try {
    for (const std::string& iface : address.interfaces)
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(iface));
    if (address.interfaces.empty())
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(address.host));
  } catch (const std::exception& e) {
    throw Error("worker " + std::to_string(env.rank) + ": Gloo cannot use " + address.said +
                " (" + first_line(e.what()) + "). Set GLOO_SOCKET_IFNAME to the network "
                "interface through which the workers reach each other (ip -brief addr lists "
                "them)");
  }
  options->threads = 2;
  auto store_gloo = c10::make_intrusive<c10d::PrefixStore>("gloo/" + attempt, store);
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  try {
    // Connects the full mesh: every worker to every other, at the address
    // each advertised through the store.
    group = c10::make_intrusive<c10d::ProcessGroupGloo>(store_gloo, env.rank, env.world_size,
                                                        options);
  } catch (const std::exception& e) {
    throw Error("worker " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                " met the others at MASTER_ADDR:MASTER_PORT = " + env.master_addr + ":" +
                std::to_string(env.master_port) + " but Gloo could not connect them, " +
                "advertising " + address.said + " (" + first_line(e.what()) + "). Each worker "
                "must advertise an address the others reach: set GLOO_SOCKET_IFNAME to that "
                "interface on every machine, or make the hostname resolve to it");
  }
  return std::make_unique<C10dCommunicator>(std::move(group), "gloo", c10::Device(c10::kCPU));
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
