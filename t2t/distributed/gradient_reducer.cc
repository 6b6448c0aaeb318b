#include "t2t/distributed/gradient_reducer.h"

#include <torch/torch.h>

#include "t2t/core/error.h"
#include "t2t/distributed/communicator.h"

namespace t2t {

GradientReducer::GradientReducer(std::vector<at::Tensor> parameters, Communicator& communicator,
                                 size_t bucket_bytes)
    : parameters_(std::move(parameters)), communicator_(communicator) {
  bucket_of_.resize(parameters_.size());
  arrived_.assign(parameters_.size(), false);
  size_t bytes = 0;
  for (size_t k = parameters_.size(); k-- > 0;) {
    const at::Tensor& p = parameters_[k];
    const size_t size = static_cast<size_t>(p.numel()) * p.element_size();
    if (buckets_.empty() || (bytes + size > bucket_bytes && !buckets_.back().members.empty())) {
      buckets_.emplace_back();
      bytes = 0;
    }
    buckets_.back().members.push_back(k);
    bytes += size;
    bucket_of_[k] = buckets_.size() - 1;
  }
  for (Bucket& b : buckets_) {
    int64_t total = 0;
    for (size_t k : b.members) {
      b.offsets.push_back(total);
      total += parameters_[k].numel();
    }
    const at::Tensor& first = parameters_[b.members.front()];
    for (size_t k : b.members)
      if (parameters_[k].scalar_type() != first.scalar_type() ||
          parameters_[k].device() != first.device())
        throw Error("data-parallel training needs all parameters in one dtype on one device");
    b.flat = torch::zeros({total}, first.options().requires_grad(false));
  }
  for (size_t k = 0; k < parameters_.size(); ++k)
    hooks_.push_back(parameters_[k].register_hook(
        [this, k](const at::Tensor& grad) { on_gradient(k, grad); }));
}

GradientReducer::~GradientReducer() {
  // The model may outlive the reducer: its hooks must not call into a
  // destroyed one.
  for (size_t k = 0; k < parameters_.size(); ++k) parameters_[k].remove_hook(hooks_[k]);
}

void GradientReducer::arm(double weight) {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = true;
  weight_ = weight;
  next_launch_ = 0;
  std::fill(arrived_.begin(), arrived_.end(), false);
  for (Bucket& b : buckets_) {
    b.pending = b.members.size();
    b.work.reset();
  }
}

void GradientReducer::fill(size_t k, const at::Tensor& grad) {
  Bucket& b = buckets_[bucket_of_[k]];
  size_t slot = 0;
  while (b.members[slot] != k) ++slot;
  at::Tensor view = b.flat.narrow(0, b.offsets[slot], parameters_[k].numel());
  // The pre-accumulation hook sees only this pass's part; earlier
  // micro-batches are already in .grad.
  const at::Tensor& earlier = parameters_[k].grad();
  torch::NoGradGuard no_grad;
  if (grad.defined() && earlier.defined())
    view.copy_((earlier + grad).reshape(-1));
  else if (grad.defined())
    view.copy_(grad.reshape(-1));
  else if (earlier.defined())
    view.copy_(earlier.reshape(-1));
  else
    view.zero_();
  if (weight_ != 1.0) view.mul_(weight_);
  arrived_[k] = true;
  --b.pending;
}

void GradientReducer::on_gradient(size_t k, const at::Tensor& grad) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!armed_ || arrived_[k]) return;
  fill(k, grad);
  launch_ready();
}

void GradientReducer::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    b.work = communicator_.all_reduce_sum_async(b.flat);
  }
}

void GradientReducer::finish(const at::Tensor& divisor) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!armed_) throw Error("GradientReducer::finish() without arm()");
  // Parameters backward did not reach (unused in this pass) still take part:
  // the other workers may have gradients for them.
  for (size_t k = 0; k < parameters_.size(); ++k)
    if (!arrived_[k]) fill(k, at::Tensor());
  launch_ready();
  armed_ = false;
  lock.unlock();
  torch::NoGradGuard no_grad;
  for (Bucket& b : buckets_) {
    b.work->wait();
    b.work.reset();
    b.flat.div_(divisor);
    for (size_t slot = 0; slot < b.members.size(); ++slot) {
      at::Tensor& p = parameters_[b.members[slot]];
      at::Tensor reduced = b.flat.narrow(0, b.offsets[slot], p.numel()).view(p.sizes());
      if (p.grad().defined())
        p.mutable_grad().copy_(reduced);
      else
        p.mutable_grad() = reduced.clone();
    }
  }
}

}  // namespace t2t
