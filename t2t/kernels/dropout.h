// Dropout for training, as torch::dropout computes it (zero with
// probability `rate`, otherwise scaled by 1 / (1 - rate)), with fused forms
// of the two places the Transformer follows it by another elementwise step.
//
// On the CPU the keep decision for element i of a call is a hash of the
// call's seed (one draw from the default CPU generator, so torch::manual_seed
// and saved generator states reproduce it) and i: no mask is drawn, stored
// or read back; backward recomputes it. The decision does not depend on the
// thread count. The keep probability is rounded to a multiple of 2^-32.
// Other devices use torch::dropout.
//
// Every function returns its input unchanged (dropout) or the plain
// composition (the fused forms) when !training or rate == 0.
#pragma once

#include <torch/types.h>

namespace t2t {

// x: any shape.
torch::Tensor dropout(const torch::Tensor& x, double rate, bool training);

// residual + dropout(x): T2T's postprocess "da". x, residual: the same shape.
torch::Tensor dropout_add(const torch::Tensor& x, const torch::Tensor& residual, double rate,
                          bool training);

// dropout(relu(x)): the feed-forward block's hidden layer. Backward needs
// only the output, so relu's input is not kept for it.
torch::Tensor relu_dropout(const torch::Tensor& x, double rate, bool training);

}  // namespace t2t
