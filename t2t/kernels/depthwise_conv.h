// A depthwise 1-D convolution over [batch, length, channels] without
// padding: y[b, t, c] = sum_k x[b, t + k, c] w[c, k], t < length - width + 1.
// The separable convolutions of the Evolved Transformer spend most of
// their time here. LibTorch's grouped convolution (oneDNN on the CPU) takes
// channels first and is slow in its backward pass for one channel a group;
// this kernel keeps T2T's channels-last layout, where each (b, t, k) is one
// vectorized pass over the channels, forward and backward. float32 on the
// CPU; other types and devices take LibTorch's grouped convolution. The
// sums over k run in order, whatever the thread count.
#pragma once

#include <torch/types.h>

namespace t2t {

// x [batch, length, channels], w [channels, 1, width] (a grouped
// convolution's weight) -> [batch, length - width + 1, channels].
// Differentiable in both.
torch::Tensor depthwise_conv1d(const torch::Tensor& x, const torch::Tensor& w);

}  // namespace t2t
