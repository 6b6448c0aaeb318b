// Float32 products of CPU inference, x W^T + b, over a weight laid out once
// for its kernel (CpuLinearWeight::pack, when a model is readied to decode):
// panels of 32 output columns, rows of x accumulating in registers (AVX-512,
// or AVX2 with FMA). Unlike oneDNN, no per-call set-up and no kernel
// compiled per new row count. Each output is the same ordered chain of fused
// multiply-adds whatever the rows and the kernel, so a sentence's products
// depend neither on its batch nor on the CPU's vector width. On a CPU with
// neither, the weight is laid out for oneDNN (onednn_linear.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "t2t/kernels/panel_prefetch.h"
#include "t2t/kernels/weight_stamp.h"

namespace t2t {

class OnednnWeight;

// The kernels: `best` is the first of the others that runs on this CPU.
enum class CpuLinearKernel { best, avx512, avx2, onednn };

class CpuLinearWeight {
 public:
  // The layout for `kernel`, or nullptr when it does not run here or the
  // weight is not a float32 [out, in] CPU matrix.
  static std::shared_ptr<const CpuLinearWeight> pack(const at::Tensor& weight,
                                                     CpuLinearKernel kernel = CpuLinearKernel::best);
  static bool runs_here(CpuLinearKernel kernel);

  // Whether this is still `weight`'s layout: the same memory, unchanged.
  bool fits(const at::Tensor& weight) const;

  // `packed` when a product of `weight` with x may use it: x float32 on the
  // CPU, no gradient wanted, and packed->fits(weight); else nullptr.
  static const CpuLinearWeight* usable(const std::shared_ptr<const CpuLinearWeight>& packed,
                                       const at::Tensor& weight, const at::Tensor& x);

  // x [..., in] float32 on the CPU -> [..., out]: x W^T + bias (bias [out]
  // or undefined), relu'd with `relu`; gradients are not tracked.
  at::Tensor apply(const at::Tensor& x, const at::Tensor& bias, bool relu) const;

  // Which kernel: "avx512" or "avx2" (t2t's), or "onednn".
  const char* kernel() const;

 private:
  int64_t out_ = 0, in_ = 0;
  CpuLinearKernel kernel_ = CpuLinearKernel::best;
  at::Tensor panels_;                           // t2t's kernel: [panels, in, 32]
  PackedWeightBytes counted_;                   // panels_, for read_ahead()
  std::shared_ptr<const OnednnWeight> onednn_;  // or oneDNN's layout
  WeightStamp source_;
};

}  // namespace t2t
