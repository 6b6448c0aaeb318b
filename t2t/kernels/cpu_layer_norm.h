// Layer normalization for CPU inference: one pass for the mean, one for
// the variance, one to write, each row on its own, in float32.
//
// At decoding sizes (a hundred rows of a few hundred channels) LibTorch's
// layer_norm spends ~15 us a call on setting up and dispatching what is
// ~1 us of arithmetic, and a Transformer's decoder calls it three times a
// layer and step (transformer_base int8: ~3% of decoding's thread time).
// The arithmetic is T2T's (layer_norm_compute): mean, then the mean of the
// squared deviations, then (x - mean) * rsqrt(variance + epsilon) * scale
// + bias, with sums in fixed lanes added in a fixed order, so a row's
// result does not depend on the rows beside it.
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
