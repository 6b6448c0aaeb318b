// Float32 linear layers for CPU inference through oneDNN (LibTorch's
// mkldnn::_linear_pointwise op), where ATen's MKL matmul keeps to AVX2 on
// non-Intel CPUs. No backward, so only where no gradient is wanted; small
// products stay with ATen, whose per-call set-up is cheaper.
//
// oneDNN compiles a kernel for each new shape on first use, and a decoder
// meets many row counts, so rows are padded up to a few bucketed counts
// (padded_rows) and the padding's output dropped. A vocabulary-wide
// product is not padded: each call costs more than compiling its kernel.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "t2t/kernels/weight_stamp.h"

namespace t2t {

// A weight [out, in] laid out once in oneDNN's blocked format, so a product
// does not lay it out again at every call. Used only while the weight is
// unchanged (WeightStamp); costs the weight's size in memory again.
class OnednnWeight {
 public:
  // nullptr when this LibTorch has no oneDNN or the weight is not a float32
  // CPU matrix.
  static std::shared_ptr<const OnednnWeight> pack(const at::Tensor& weight);
  // Whether this LibTorch has oneDNN's ops that pack() and onednn_linear() use.
  static bool available();
  // The packed form when it is still `weight`'s, else nullptr.
  const at::Tensor* packed_for(const at::Tensor& weight) const;

 private:
  at::Tensor packed_;
  WeightStamp source_;
};

// Whether onednn_linear() will be used for `x` [..., in] times a weight of
// `out` rows: oneDNN compiled in, float32 on the CPU, gradients off, and
// enough rows (or a wide enough weight, as a softmax over a vocabulary) to
// pay.
bool use_onednn_linear(const at::Tensor& x, int64_t out);

// The row count a product of `rows` rows is computed at: rows itself below
// 16, else rounded up to a multiple of max(16, 2^floor(log2 rows) / 8).
int64_t padded_rows(int64_t rows);

// x [..., in] float32 CPU, weight [out, in], bias [out] or undefined ->
// [..., out]; the same as at::linear (followed by relu with `relu`, in the
// same pass) up to float rounding. `packed`: weight's packed form, used
// when it still is (OnednnWeight::packed_for), or nullptr.
at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         bool relu = false, const OnednnWeight* packed = nullptr);

}  // namespace t2t
