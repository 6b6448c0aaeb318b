// Which weight, at which version, a copy laid out for a kernel was made
// from, so a weight changed since is never read through a stale copy.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace t2t {

class WeightStamp {
 public:
  WeightStamp() = default;
  // Its own impl, sharing the weight's memory: set_data() on the weight
  // leaves it be, and no later tensor can take that memory and pass for it.
  explicit WeightStamp(const at::Tensor& weight)
      : source_(weight.detach()), version_(weight._version()) {}

  bool matches(const at::Tensor& weight) const {
    return source_.defined() && weight.defined() && weight.data_ptr() == source_.data_ptr() &&
           weight._version() == version_ && weight.sizes() == source_.sizes() &&
           weight.scalar_type() == source_.scalar_type();
  }
  const at::Tensor& weight() const { return source_; }

 private:
  at::Tensor source_;
  int64_t version_ = 0;
};

}  // namespace t2t
