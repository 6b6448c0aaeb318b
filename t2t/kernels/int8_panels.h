// int8 products of CPU inference on t2t's own kernels, for the int8 layers
// (int8_linear.h):
// - AVX-512 VNNI: sums four byte products into int32 without saturating,
//   so activations take 8 bits;
// - AVX2: `vpmaddubsw` saturates at int16, so activations take 7 bits
//   (codes 0-127) and two products of at most 127 x 127 cannot saturate.
//
// The weight keeps its int8 rows and per-row scales (quantize_rows), laid
// out once in panels of output columns (64 for VNNI, 16 for AVX2), 4 inputs
// interleaved. Activations are quantized per call and per row (asymmetric,
// the row's range with 0 in it), so a row's result does not depend on the
// rows beside it; the product accumulates in int32, exactly.
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

  // The weight of outputs `ids` only (int64 [n], each < out), in that
  // order: their panels' columns gathered as they are, so each output
  // computes exactly what it computes here.
  std::shared_ptr<const Int8PanelWeight> select_outputs(const at::Tensor& ids) const;

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
