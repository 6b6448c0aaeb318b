// Float32 linear layers for CPU inference through oneDNN, the GEMM library
// LibTorch ships (its mkldnn::_linear_pointwise op, the one PyTorch's
// compiler emits for frozen CPU models). ATen's own float32 matmul goes to
// MKL, which on non-Intel x86 CPUs keeps to its AVX2 code: on an AVX-512
// AMD EPYC a [128 x 128] x [128 x 512] product ran at ~107 GFLOP/s one
// thread, oneDNN's at ~215. Used only where no gradient is wanted, as the
// op has no backward; below a few rows its per-call set-up costs more than
// MKL's, so small products stay with ATen.
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

// Whether onednn_linear() will be used for `x` [..., in]: oneDNN compiled
// in, float32 on the CPU, gradients off, and enough rows to pay.
bool use_onednn_linear(const at::Tensor& x);

// x [..., in] float32 CPU, weight [out, in], bias [out] or undefined ->
// [..., out]; the same as at::linear (followed by relu with `relu`, in the
// same pass) up to float rounding.
at::Tensor onednn_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         bool relu = false);

}  // namespace t2t
