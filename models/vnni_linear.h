// int8 products of CPU inference on AVX-512 VNNI: t2t's own kernel for the
// int8 layers (int8_linear.h) where the CPU has the instruction.
//
// The weight keeps its int8 rows and per-row scales (quantize_rows); it is
// laid out once in panels of 64 output columns, 4 inputs interleaved, the
// order VNNI's dot product reads, and 6 rows accumulate in 24 registers. Activations are quantized per call and
// per row (asymmetric, 8 bits, the row's range with 0 in it), so that a
// row's result does not depend on the rows beside it, and the product
// accumulates in int32, exactly. Against LibTorch's dynamic quantized linear
// (FBGEMM: one range for the whole input, 7 bits) it has no per-call
// set-up to pay and a finer activation grid, and it ran ~1,000 against
// ~750 GOP/s a core here on a base Transformer's products of 48-128 rows.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "models/panel_prefetch.h"
#include "t2t/model/int8_weights.h"

namespace t2t {

// Whether this CPU runs the kernel (AVX-512 with VNNI).
bool vnni_supported();

class VnniWeight {
 public:
  // weights: int8 values [out, in] and float32 scales [out]; bias [out] or
  // undefined. nullptr when !vnni_supported().
  static std::shared_ptr<const VnniWeight> pack(const Int8Weights& weights,
                                                const at::Tensor& bias);

  // x [rows, in] float32, contiguous, on the CPU -> [rows, out] float32.
  at::Tensor apply(const at::Tensor& x) const;

 private:
  int64_t out_ = 0, in_ = 0, in4_ = 0;  // in4_: in rounded up to 4
  at::Tensor panels_;    // int8 [panels, in4 / 4, 64, 4]
  PackedWeightBytes counted_;  // panels_, for read_ahead()
  at::Tensor col_sums_;  // int32 [panels * 64]: each output's sum of weights
  at::Tensor scales_;    // float32 [panels * 64]
  at::Tensor bias_;      // float32 [panels * 64], zero without a bias
};

}  // namespace t2t
