// int8 linear layers for CPU inference: weights quantized once, per output
// row (symmetric, int8), activations quantized per call from their observed
// range, and the product computed by the quantized GEMM LibTorch ships
// (FBGEMM on x86, through the dispatcher's quantized::linear_prepack and
// quantized::linear_dynamic, the ops behind PyTorch's dynamic quantization).
// Nothing here multiplies matrices itself.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>

namespace t2t {

// Empty when this LibTorch can run int8 linear layers on this CPU, else
// why not (no quantized engine compiled in).
std::string int8_unsupported_reason();

class Int8Linear {
 public:
  // weight [out, in] and bias [out] (may be undefined), float32 on the CPU.
  // Throws t2t::Error for other dtypes or devices, naming `what`.
  Int8Linear(const at::Tensor& weight, const at::Tensor& bias, const std::string& what);

  // x [..., in] float32 on the CPU -> [..., out] float32.
  at::Tensor operator()(const at::Tensor& x) const;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 private:
  int64_t in_ = 0, out_ = 0;
  c10::IValue packed_;  // the engine's packed weights and bias
};

}  // namespace t2t
