// Data-parallel workers talk through c10d: a TCPStore for the rendezvous,
// then Gloo (CPU) or NCCL (CUDA). This header keeps c10d's out of its
// includers.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace t2t {

// This process's place in a data-parallel run, as torchrun describes it.
struct WorkerEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT. nullopt
// when WORLD_SIZE is unset (a single process); t2t::Error naming the
// variable when they are incomplete or out of range.
std::optional<WorkerEnv> worker_env_from_environment();

// How long workers wait for each other.
struct CommunicatorTimeouts {
  // At start: every worker must reach the store within this.
  std::chrono::milliseconds meeting = std::chrono::minutes(30);
  // Then a collective (or the store) unanswered this long fails, so a dead
  // worker or link ends the run instead of hanging it.
  std::chrono::milliseconds collective = std::chrono::minutes(5);
};

// An operation in flight; wait() rethrows a failure of the collective as
// a t2t::Error naming the worker that did not answer, where it can tell.
class CollectiveWork {
 public:
  virtual ~CollectiveWork() = default;
  virtual void wait() = 0;
};

class Communicator {
 public:
  // Joins the group: rank 0 hosts the store at master_addr:master_port.
  // NCCL when `device` is CUDA (t2t::Error if there is no NCCL), else Gloo.
  static std::unique_ptr<Communicator> connect(const WorkerEnv& env, const c10::Device& device,
                                               const CommunicatorTimeouts& timeouts = {});
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "gloo" or "nccl"
  // Where collective tensors must live: the CPU for Gloo, the GPU for NCCL.
  virtual c10::Device device() const = 0;

  // Elementwise sum over the workers, in place. Every worker must issue the
  // same collectives in the same order with tensors of the same shape.
  virtual std::unique_ptr<CollectiveWork> all_reduce_sum_async(at::Tensor& tensor) = 0;
  void all_reduce_sum(at::Tensor& tensor) { all_reduce_sum_async(tensor)->wait(); }

  // Copies rank `root`'s tensor to every worker, in place.
  virtual void broadcast(at::Tensor& tensor, int root = 0) = 0;

  // Every worker's string, by rank (for per-worker input positions).
  std::vector<std::string> all_gather_strings(const std::string& mine);

  virtual void barrier() = 0;

  // Work the chief does alone while the others wait, which may outlast the
  // collective timeout; every worker calls it at the same point. The chief
  // signals through the store that it is alive; the others throw t2t::Error
  // when it failed or gave no sign of life within the collective timeout.
  virtual void chief_alone(const std::string& what, const std::function<void()>& work) = 0;

  // At a run's normal end, every worker. The chief, whose process hosts the
  // store, waits (10 seconds at most) until all others have left, as they
  // may still be reading from it.
  virtual void leave() = 0;
};

}  // namespace t2t
