// int8 products of CPU inference on t2t's own kernels, for the int8 layers
// (int8_linear.h) on CPUs that have one of them:
// - AVX-512 VNNI: its dot product sums four products of unsigned and signed
//   bytes into int32 without saturating, so activations take 8 bits;
// - AVX2: `vpmaddubsw` sums two such products into int16, saturating, then
//   `vpmaddwd` pairs those into int32. Activations take 7 bits (codes 0-127)
//   so that two products of at most 127 x 127 cannot saturate: exact, three
//   instructions for 32 products where a float32 FMA does 8.
//
// The weight keeps its int8 rows and per-row scales (quantize_rows); it is
// laid out once in panels of output columns (64 for VNNI, 16 for AVX2), 4
// inputs interleaved, the order both dot products read, and rows accumulate
// in registers (6 x 64 columns in 24 registers; 4 x 16 columns in 8).
// Activations are quantized per call and per row (asymmetric, the row's
// range with 0 in it), so that a row's result does not depend on the rows
// beside it, and the product accumulates in int32, exactly. Against
// LibTorch's dynamic quantized linear (FBGEMM: one range for the whole
// input, 7 bits, its activations packed and its output requantized in each
// call) there is no per-call set-up to pay, and the layout is a plain
// reordering, quick to make at load. VNNI ran ~1,000 against ~750 GOP/s a
// core on a base Transformer's products of 48-128 rows.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "t2t/kernels/int8_weights.h"
#include "t2t/kernels/panel_prefetch.h"

namespace t2t {

// The kernels: `best` is the first of the others that runs on this CPU.
enum class Int8Kernel { best, vnni, avx2 };

// Whether `kernel` runs on this CPU (`best`: whether any does).
bool int8_kernel_runs(Int8Kernel kernel);

class Int8PanelWeight {
 public:
  // weights: int8 values [out, in] and float32 scales [out]; bias [out] or
  // undefined. nullptr when `kernel` does not run here.
  static std::shared_ptr<const Int8PanelWeight> pack(const Int8Weights& weights,
                                                     const at::Tensor& bias,
                                                     Int8Kernel kernel = Int8Kernel::best);

  // x [rows, in] float32, contiguous, on the CPU -> [rows, out] float32.
  at::Tensor apply(const at::Tensor& x) const;

  // "vnni" or "avx2".
  const char* kernel() const;
  // The largest activation code: 255 (8 bits) or 127 (7 bits).
  int32_t max_code() const;

 private:
  Int8Kernel kernel_ = Int8Kernel::vnni;
  int64_t out_ = 0, in_ = 0, in4_ = 0;  // in4_: in rounded up to 4
  at::Tensor panels_;    // int8 [panels, in4 / 4, width (64 or 16), 4]
  PackedWeightBytes counted_;  // panels_, for read_ahead()
  at::Tensor col_sums_;  // int32 [panels * width]: each output's sum of weights
  at::Tensor scales_;    // float32 [panels * width]
  at::Tensor bias_;      // float32 [panels * width], zero without a bias
};

}  // namespace t2t
