// Sums gradients over data-parallel workers while backward still runs, in
// buckets of about `bucket_bytes` (parameters in reverse order, as backward
// produces them), each sent once complete. Buckets go out in index order,
// so every worker issues the same collectives in the same order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace t2t {

class Communicator;
class CollectiveWork;

class GradientReducer {
 public:
  // `parameters` must outlive the reducer (they are the model's).
  GradientReducer(std::vector<at::Tensor> parameters, Communicator& communicator,
                  size_t bucket_bytes = 25u << 20);
  ~GradientReducer();

  // Arms the hooks for the next backward pass, the last before the update:
  // each parameter's full gradient (.grad plus this pass's) times `weight`
  // goes into its bucket. Passes without arm() accumulate as usual.
  void arm(double weight);

  // After that backward: sets each .grad to the sum over workers divided by
  // `divisor`, a scalar tensor on the gradients' device (not read by the
  // host).
  void finish(const at::Tensor& divisor);

 private:
  struct Bucket {
    at::Tensor flat;                 // every member's gradient, end to end
    std::vector<size_t> members;     // parameter indices
    std::vector<int64_t> offsets;    // each member's start in flat
    size_t pending = 0;              // members whose gradient has not arrived
    std::unique_ptr<CollectiveWork> work;
  };

  void on_gradient(size_t param, const at::Tensor& grad);
  void fill(size_t param, const at::Tensor& grad);
  void launch_ready();  // under mutex_

  std::vector<at::Tensor> parameters_;
  std::vector<unsigned> hooks_;  // each parameter's hook, for removal
  Communicator& communicator_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // parameter index -> bucket
  std::vector<bool> arrived_;
  size_t next_launch_ = 0;
  bool armed_ = false;
  double weight_ = 1.0;
  std::mutex mutex_;
};

}  // namespace t2t
