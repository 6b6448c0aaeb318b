// A weight matrix in int8, the form int8 checkpoints save and int8 layers
// are built from: values int8 [out, in] and scales float32 [out], with
// weight[o][i] ~ values[o][i] * scales[o] (symmetric, per output row).
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

namespace t2t {

struct Int8Weights {
  at::Tensor values;
  at::Tensor scales;
};

// By name: see InferenceModel::int8_weights().
using Int8WeightMap = std::map<std::string, Int8Weights>;

}  // namespace t2t
