// int8 linear layers for CPU inference: weights quantized once, per output
// row (symmetric), activations per call from their observed range. Runs on
// t2t's kernels where the CPU has one (int8_panels.h), else on LibTorch's
// quantized::linear_dynamic (activations per call, 7 bits).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <string>

#include "t2t/kernels/int8_panels.h"
#include "t2t/kernels/int8_weights.h"

namespace t2t {

// Empty when this LibTorch can run int8 linear layers on this CPU, else
// why not (no quantized engine compiled in).
std::string int8_unsupported_reason();

// weight [out, in] float32 on the CPU -> its int8 form. Throws t2t::Error
// for other dtypes or devices, naming `what`.
Int8Weights quantize_rows(const at::Tensor& weight, const std::string& what);

class Int8Linear {
 public:
  // weight [out, in] and bias [out] (may be undefined), float32 on the CPU.
  // Throws t2t::Error for other dtypes or devices, naming `what`.
  Int8Linear(const at::Tensor& weight, const at::Tensor& bias, const std::string& what);
  // From weights quantized before (an int8 checkpoint). Throws t2t::Error
  // naming `what` when values and scales do not fit together.
  Int8Linear(const Int8Weights& weights, const at::Tensor& bias, const std::string& what);

  // x [..., in] float32 on the CPU -> [..., out] float32.
  at::Tensor operator()(const at::Tensor& x) const;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

  // The layer over outputs `ids` only (int64 [n], each < out_features()),
  // in that order, each computing exactly what it computes here (a lexical
  // shortlist's softmax rows); nullptr where LibTorch's engine runs it.
  std::shared_ptr<const Int8Linear> select_outputs(const at::Tensor& ids) const;

 private:
  Int8Linear() = default;
  int64_t in_ = 0, out_ = 0;
  std::shared_ptr<const Int8PanelWeight> panels_;  // t2t's kernel's layout
  c10::IValue packed_;  // or LibTorch's engine's packed weights and bias
};

}  // namespace t2t
