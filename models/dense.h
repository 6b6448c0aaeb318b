// A dense (fully connected) layer that can switch to int8 weights for CPU
// inference. It has torch::nn::Linear's parameters ("weight" [out, in] and
// "bias" [out], so checkpoints are unchanged) and draws them as it does,
// except under SkipInitialization (t2t/model/skip_init.h), where they stay
// untouched for a checkpoint to set. forward() runs the int8 kernel
// (int8_linear.h) once quantize_int8() was called; without gradients on
// the CPU, the packed float32 kernel (cpu_linear.h) after
// pack_for_inference(), else oneDNN's (onednn_linear.h).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "t2t/kernels/cpu_linear.h"
#include "t2t/kernels/int8_linear.h"

namespace t2t {

class DenseImpl : public torch::nn::Cloneable<DenseImpl> {
 public:
  DenseImpl(int64_t in, int64_t out) : DenseImpl(torch::nn::LinearOptions(in, out)) {}
  explicit DenseImpl(const torch::nn::LinearOptions& options);

  // Registers the parameters and draws them as torch::nn::Linear does
  // (Kaiming-uniform weight, uniform bias), unless skip_initialization().
  void reset() override;

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
  // Lays the float weight out for the CPU's inference kernel
  // (CpuLinearWeight), for a layer that will decode: forward() then uses it
  // without gradients for as long as the weight stays as it is. Nothing for
  // an int8 layer, or a weight that is not float32 on the CPU.
  void pack_for_inference();

  torch::nn::LinearOptions options;
  torch::Tensor weight;
  torch::Tensor bias;  // undefined without a bias

 private:
  std::shared_ptr<const Int8Linear> int8_;
  std::shared_ptr<const CpuLinearWeight> packed_;
};
TORCH_MODULE(Dense);

}  // namespace t2t
