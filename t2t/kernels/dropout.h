// Dropout for training, as torch::dropout computes it, with fused forms of
// the two places the Transformer follows it by another elementwise step.
// On the CPU the keep decision for element i is a hash of the call's seed
// (one draw from the default CPU generator, so torch::manual_seed
// reproduces it) and i: no mask is stored, backward recomputes it, and the
// result does not depend on the thread count. Other devices use
// torch::dropout. With !training or rate == 0: no dropout.
#pragma once

#include <torch/types.h>

namespace t2t {

// x: any shape.
torch::Tensor dropout(const torch::Tensor& x, double rate, bool training);

// residual + dropout(x): T2T's postprocess "da". x, residual: the same shape.
torch::Tensor dropout_add(const torch::Tensor& x, const torch::Tensor& residual, double rate,
                          bool training);

// dropout(relu(x)): the feed-forward block's hidden layer.
torch::Tensor relu_dropout(const torch::Tensor& x, double rate, bool training);

}  // namespace t2t
