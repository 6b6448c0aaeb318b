#include "t2t/distributed/communicator.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "t2t/core/cuda_loader.h"
#include "t2t/core/error.h"
#include "t2t/distributed/group_generation.h"
#include "t2t/distributed/nccl_entry_point.h"
#include "t2t/distributed/network_address.h"

namespace t2t {

namespace {

using Clock = std::chrono::steady_clock;

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

// The first line of an exception's text: c10's errors append a C++ stack
// that says nothing to a user.
std::string first_line(const std::string& text) {
  const size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

std::string seconds(std::chrono::milliseconds t) {
  return std::to_string((t.count() + 999) / 1000) + " s";
}

// Who the other workers are, gathered through the store at start, so that
// a failed collective can name the one that stopped answering.
struct Peers {
  int rank = 0;
  std::vector<std::string> addresses;  // by rank; "" where not known
  std::vector<std::string> described;  // by rank: "worker 1 (10.0.0.2, host b, pid 7)"
  std::chrono::milliseconds timeout{0};
  std::string backend = "Gloo";  // for messages

  // The workers a failure's text points at: the one whose address Gloo
  // names (where only one worker has it), else the only other worker.
  std::vector<int> suspects(const std::string& text) const {
    std::vector<int> out;
    for (int r = 0; r < static_cast<int>(addresses.size()); ++r) {
      if (r == rank || addresses[r].empty()) continue;
      if (text.find("[" + addresses[r] + "]") == std::string::npos) continue;
      int sharing = 0;
      for (int q = 0; q < static_cast<int>(addresses.size()); ++q)
        sharing += q != rank && addresses[q] == addresses[r];
      if (sharing == 1) out.push_back(r);
    }
    if (out.empty() && addresses.size() == 2) out.push_back(1 - rank);
    return out;
  }

  // What went wrong, as an OptionError's message: a timeout names the
  // option that sets it.
  std::string explain(const std::string& error) const {
    std::string said = first_line(error);
    // The backend's own text, without its source location and its advice to read
    // the other worker's log (said below, in the user's terms).
    const size_t location_end = said.find("] ");
    if (said.rfind("[", 0) == 0 && location_end != std::string::npos &&
        said.find(".cc:") < location_end)
      said = said.substr(location_end + 2);
    if (const size_t advice = said.find(". This is typically"); advice != std::string::npos)
      said.resize(advice);
    std::string who;
    for (int r : suspects(said)) who += (who.empty() ? "" : ", ") + described[r];
    if (who.empty()) who = "another worker";
    const bool timed_out = said.find("imed out") != std::string::npos ||
                           said.find("timeout") != std::string::npos;
    const bool closed = said.find("closed") != std::string::npos ||
                        said.find("reset") != std::string::npos ||
                        said.find("refused") != std::string::npos ||
                        said.find("Broken pipe") != std::string::npos;
    const std::string what =
        timed_out ? who + " did not answer within the collective timeout ({collective_timeout}=" +
                        seconds(timeout) + ")"
        : closed  ? who + " closed its connection (it stopped)"
                  : who + " failed";
    return "worker " + std::to_string(rank) + " of " + std::to_string(addresses.size()) +
           ": a collective operation failed: " + what + " (" + backend + ": " + said +
           "). A worker that stopped says why in its own log; if none did, the network between "
           "them failed. Started again, the run resumes from its last checkpoint";
  }
};

class Work final : public CollectiveWork {
 public:
  Work(c10::intrusive_ptr<c10d::Work> work, std::shared_ptr<const Peers> peers)
      : work_(std::move(work)), peers_(std::move(peers)) {}
  void wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      throw OptionError("collective_timeout", peers_->explain(e.what()));
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::shared_ptr<const Peers> peers_;
};

// The count of workers done with the store, under a run's keys.
constexpr const char* kLeftKey = "left";

class C10dCommunicator final : public Communicator {
 public:
  C10dCommunicator(c10::intrusive_ptr<c10d::Backend> backend, std::string name,
                   c10::Device device, c10::intrusive_ptr<c10d::Store> store,
                   std::shared_ptr<const Peers> peers)
      : backend_(std::move(backend)),
        name_(std::move(name)),
        device_(device),
        store_(std::move(store)),
        peers_(std::move(peers)) {}

  void leave() override {
    try {
      if (rank() != 0) {
        store_->add(kLeftKey, 1);
        return;
      }
      const auto deadline = Clock::now() + std::min<std::chrono::milliseconds>(
                                               peers_->timeout, std::chrono::seconds(10));
      while (store_->add(kLeftKey, 0) < size() - 1 && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } catch (const std::exception&) {
      // The store is gone already: nothing to wait for.
    }
  }

  int rank() const override { return backend_->getRank(); }
  int size() const override { return backend_->getSize(); }
  std::string backend() const override { return name_; }
  c10::Device device() const override { return device_; }

  std::unique_ptr<CollectiveWork> all_reduce_sum_async(at::Tensor& tensor) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    return work(backend_->allreduce(tensors, options));
  }

  void broadcast(at::Tensor& tensor, int root) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    work(backend_->broadcast(tensors, options))->wait();
  }

  void barrier() override { work(backend_->barrier())->wait(); }

  void chief_alone(const std::string& what, const std::function<void()>& work) override;

 private:
  std::unique_ptr<CollectiveWork> work(c10::intrusive_ptr<c10d::Work> w) {
    return std::make_unique<Work>(std::move(w), peers_);
  }

  c10::intrusive_ptr<c10d::Backend> backend_;
  std::string name_;
  c10::Device device_;
  c10::intrusive_ptr<c10d::Store> store_;  // this group generation's keys
  std::shared_ptr<const Peers> peers_;
  int64_t chief_tasks_ = 0;
};

void C10dCommunicator::chief_alone(const std::string& what, const std::function<void()>& work) {
  const std::string key = "chief/" + std::to_string(chief_tasks_++) + "/";
  const auto timeout = peers_->timeout;
  if (rank() == 0) {
    // A heartbeat, a few to a timeout, while the work runs.
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    const auto every = std::max(std::chrono::milliseconds(100),
                                std::min<std::chrono::milliseconds>(std::chrono::seconds(5),
                                                                    timeout / 4));
    std::thread beat([&] {
      std::unique_lock<std::mutex> lock(m);
      while (!done) {
        try {
          store_->add(key + "beat", 1);
        } catch (const std::exception&) {
          // The others see the silence and say so.
        }
        cv.wait_for(lock, every, [&] { return done; });
      }
    });
    const auto finish = [&](const char* how) {
      {
        std::lock_guard<std::mutex> lock(m);
        done = true;
      }
      cv.notify_all();
      beat.join();
      try {
        store_->set(key + "end", std::vector<uint8_t>(how, how + std::strlen(how)));
      } catch (const std::exception&) {
      }
    };
    try {
      work();
    } catch (...) {
      finish("failed");
      throw;
    }
    finish("ok");
    return;
  }
  int64_t last_beat = -1;
  auto last_sign = Clock::now();
  std::chrono::milliseconds pause(5);
  try {
    while (true) {
      if (store_->check({key + "end"})) {
        const std::vector<uint8_t> how = store_->get(key + "end");
        if (std::string(how.begin(), how.end()) != "ok")
          throw Error("worker " + std::to_string(rank()) + ": worker 0 failed during " + what +
                      "; its log says why");
        return;
      }
      const int64_t beat = store_->add(key + "beat", 0);
      if (beat != last_beat) {
        last_beat = beat;
        last_sign = Clock::now();
      } else if (Clock::now() - last_sign > timeout) {
        throw OptionError("collective_timeout",
                          "worker " + std::to_string(rank()) + ": " + peers_->described[0] +
                              " gave no sign of life for " + seconds(timeout) +
                              " ({collective_timeout}) during " + what +
                              ". It stopped, or the network between the workers failed. Started "
                              "again, the run resumes from its last checkpoint");
      }
      // Soon at first: most such work (a checkpoint) takes a moment.
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("worker " + std::to_string(rank()) + " lost the store (MASTER_ADDR:MASTER_PORT) "
                "while waiting for " + peers_->described[0] + " during " + what + ": " +
                first_line(e.what()) + ". Started again, the run resumes from its last "
                "checkpoint");
  }
}

// Every worker says where it runs; each learns all. Keys under `store`.
std::shared_ptr<Peers> gather_peers(c10d::Store& store, const WorkerEnv& env,
                                    const std::string& address,
                                    std::chrono::milliseconds timeout) {
  auto peers = std::make_shared<Peers>();
  peers->rank = env.rank;
  peers->timeout = timeout;
  const std::string mine = address + "\n" + host_name() + "\n" + std::to_string(::getpid());
  store.set("who/" + std::to_string(env.rank), std::vector<uint8_t>(mine.begin(), mine.end()));
  for (int r = 0; r < env.world_size; ++r) {
    const std::vector<uint8_t> bytes = store.get("who/" + std::to_string(r));
    const std::string text(bytes.begin(), bytes.end());
    const size_t a = text.find('\n'), b = text.find('\n', a + 1);
    const std::string addr = text.substr(0, a);
    const std::string host = text.substr(a + 1, b - a - 1);
    peers->addresses.push_back(addr);
    peers->described.push_back("worker " + std::to_string(r) + " (" +
                               (addr.empty() ? "" : addr + ", ") + "host " + host + ", pid " +
                               text.substr(b + 1) + ")");
  }
  return peers;
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
                                                    const CommunicatorTimeouts& timeouts) {
  // Gloo writes to its peers with writev, which raises SIGPIPE on a
  // connection the peer has reset; its default action ends this worker
  // without a word (a Python worker never sees it: Python ignores SIGPIPE
  // at start). Ignored, the write fails with EPIPE, and the collective's
  // error names the worker that went.
  ::signal(SIGPIPE, SIG_IGN);
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = env.world_size;
  store_options.waitWorkers = true;
  store_options.timeout = timeouts.meeting;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    throw Error("worker " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                " could not meet the others at MASTER_ADDR:MASTER_PORT = " + env.master_addr +
                ":" + std::to_string(env.master_port) + " (" + first_line(e.what()) +
                "). Check that rank 0 runs, the address is reachable and the port is free.");
  }
  // Met: from here on, silence for the collective timeout is a failure.
  store->setTimeout(timeouts.collective);
  // Each group takes keys of its own, or a restarted worker would read the
  // dead group's addresses.
  const std::string attempt = agree_generation(*store, env.rank, env.world_size, timeouts.meeting);
  auto t2t_store = c10::make_intrusive<c10d::PrefixStore>("t2t/" + attempt, store);
  if (device.is_cuda()) {
    auto peers = gather_peers(*t2t_store, env, "", timeouts.collective);
    peers->backend = "NCCL";
    // NCCL lives in LibTorch's CUDA half, reached through libt2t_cuda.so.
    const auto make = reinterpret_cast<MakeNcclBackend>(cuda_module_symbol(kMakeNcclBackend));
    c10::intrusive_ptr<c10d::Backend> nccl;
    make(c10::make_intrusive<c10d::PrefixStore>("nccl/" + attempt, store), env.rank,
         env.world_size, timeouts.collective, &nccl);
    return std::make_unique<C10dCommunicator>(std::move(nccl), "nccl", device, t2t_store,
                                              std::move(peers));
  }
  auto options = c10d::ProcessGroupGloo::Options::create(timeouts.collective);
  const ListenAddress address = listen_address(env);
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
  auto peers = gather_peers(*t2t_store, env, address.host, timeouts.collective);
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
  return std::make_unique<C10dCommunicator>(std::move(group), "gloo", c10::Device(c10::kCPU),
                                            t2t_store, std::move(peers));
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
