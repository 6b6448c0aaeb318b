// Float32 products of CPU inference, x W^T + b, over a weight laid out once
// for its kernel (CpuLinearWeight::pack, when a model is readied to decode).
//
// On CPUs with AVX-512 the kernel is t2t's own: the weight in panels of 32
// output columns, each panel's [in x 32] block read contiguously while 8 rows
// of x accumulate in 16 registers. At decoding sizes (a few to a few hundred
// rows) it runs at the speed of oneDNN's best (~250 GFLOP/s a core here)
// without its per-call set-up, ~10 us a product that a small Transformer's
// decoder pays 13 times a step, nor its kernel compilation per new row count
// on first use. Each output is the same ordered sum over the inputs
// whatever the number of rows, so a sentence's products do not depend on
// its batch. Elsewhere the weight is laid out for oneDNN's kernel
// (OnednnWeight, onednn_linear.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "models/panel_prefetch.h"
#include "models/weight_stamp.h"

namespace t2t {

class OnednnWeight;

class CpuLinearWeight {
 public:
  // The layout for this CPU's kernel, or nullptr when there is none: the
  // weight is not a float32 [out, in] CPU matrix, or the CPU has neither
  // AVX-512 nor a LibTorch with oneDNN.
  static std::shared_ptr<const CpuLinearWeight> pack(const at::Tensor& weight);

  // Whether this is still `weight`'s layout: the same memory, unchanged
  // since (a weight trained, loaded or converted since is not).
  bool fits(const at::Tensor& weight) const;

  // `packed` when a product of `weight` with x may use it: x float32 on the
  // CPU, no gradient wanted, and packed->fits(weight); else nullptr.
  static const CpuLinearWeight* usable(const std::shared_ptr<const CpuLinearWeight>& packed,
                                       const at::Tensor& weight, const at::Tensor& x);

  // x [..., in] float32 on the CPU -> [..., out]: x W^T + bias (bias [out]
  // or undefined), relu'd with `relu`; gradients are not tracked.
  at::Tensor apply(const at::Tensor& x, const at::Tensor& bias, bool relu) const;

  // Which kernel: "avx512" (t2t's) or "onednn".
  const char* kernel() const;

 private:
  int64_t out_ = 0, in_ = 0;
  at::Tensor panels_;                           // t2t's kernel: [panels, in, 32]
  PackedWeightBytes counted_;                   // panels_, for read_ahead()
  std::shared_ptr<const OnednnWeight> onednn_;  // or oneDNN's layout
  WeightStamp source_;
};

}  // namespace t2t
