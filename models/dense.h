// A dense (fully connected) layer that can switch to int8 weights for CPU
// inference. It is a torch::nn::Linear (same "weight" and "bias"
// parameters, so checkpoints are unchanged) whose forward() runs the int8
// kernel (int8_linear.h) once quantize_int8() was called, and oneDNN's
// float32 kernel (onednn_linear.h) when no gradient is wanted on the CPU.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "models/int8_linear.h"

namespace t2t {

class DenseImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;

  torch::Tensor forward(const torch::Tensor& x);
  // relu(forward(x)), fused where the kernel can.
  torch::Tensor forward_relu(const torch::Tensor& x);

  // Quantizes the current weight to int8 (per output row) for inference.
  // The float weight stays as it is, for saving or for switching back with
  // dequantize(). `what` names the layer in errors.
  void quantize_int8(const std::string& what);
  // The int8 form quantize_int8() would use, for saving; and building the
  // int8 layer from such a saved form instead, releasing the float weight.
  Int8Weights int8_weights(const std::string& what) const;
  void load_int8(const Int8Weights& weights, const std::string& what);
  void dequantize();
  // Once quantized: frees the float weight, which forward() no longer
  // reads; the layer can then neither be trained, saved nor dequantized.
  void release_float_weight();
  bool quantized() const { return int8_ != nullptr; }

 private:
  std::shared_ptr<const Int8Linear> int8_;
};
TORCH_MODULE(Dense);

}  // namespace t2t
