// Float32 linear layers for CPU inference through oneDNN, the GEMM library
// LibTorch ships (its mkldnn::_linear_pointwise op, the one PyTorch's
// compiler emits for frozen CPU models). ATen's own float32 matmul goes to
// MKL, which on non-Intel x86 CPUs keeps to its AVX2 code: on an AVX-512
// AMD EPYC a [128 x 128] x [128 x 512] product ran at ~107 GFLOP/s one
// thread, oneDNN's at ~215. Used only where no gradient is wanted, as the
// op has no backward; below a few rows its per-call set-up (~10 us) costs
// more than MKL's, so small products of small matrices stay with ATen.
//
// oneDNN compiles a kernel for each new shape on first use (0.2-0.5 ms
// each), and a decoder meets many row counts: beams x sentences left, one
// row per sentence at the first step, batch x length in the encoder. Rows
// of weights narrower than a vocabulary are therefore padded up to a few
// bucketed counts (padded_rows), and the padding's output dropped: each
// row's result does not depend on the others, and a fresh process compiles
// ~8x fewer kernels. A vocabulary-wide product is not padded: each call of
// it costs more than compiling its kernel once.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "t2t/kernels/weight_stamp.h"

namespace t2t {

// A weight [out, in] laid out once in oneDNN's blocked format, so that a
// product does not lay it out again at every call: 8-11% of a decoder's
// time on the tiny and base Transformers. Used for its weight only while
// that is unchanged (WeightStamp); the copy costs the weight's size in
// memory again. CpuLinearWeight (cpu_linear.h) takes it on CPUs without
// AVX-512 or AVX2.
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
// 16, else rounded up to a multiple of max(16, 2^floor(log2 rows) / 8),
// so that at most ~12% of the rows are padding past 128.
int64_t padded_rows(int64_t rows);

// x [..., in] float32 CPU, weight [out, in], bias [out] or undefined ->
// [..., out]; the same as at::linear (followed by relu with `relu`, in the
// same pass) up to float rounding. `packed`: weight's packed form, used
// when it still is (OnednnWeight::packed_for), or nullptr.
at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         bool relu = false, const OnednnWeight* packed = nullptr);

}  // namespace t2t
