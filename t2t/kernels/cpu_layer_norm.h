// Layer normalization for CPU inference, in float32, without LibTorch's
// per-call set-up (which outweighs the arithmetic at decoding sizes).
// T2T's arithmetic (layer_norm_compute): (x - mean) * rsqrt(variance +
// epsilon) * scale + bias, with sums in a fixed order, so a row's result
// does not depend on the rows beside it.
#pragma once

#include <ATen/core/Tensor.h>

namespace t2t {

// Whether cpu_layer_norm takes this input and these parameters: x float32
// on the CPU with a last dimension of weight's size, weight and bias float32
// [channels] on the CPU, and no gradient wanted.
bool cpu_layer_norm_usable(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// x [..., channels] -> normalized over the last dimension, scaled by weight
// and shifted by bias.
at::Tensor cpu_layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                          double epsilon);

}  // namespace t2t
