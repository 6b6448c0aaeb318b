// A model that can take its parameters from a checkpoint Tensor2Tensor
// wrote (TensorFlow's tensor bundle, under T2T's variable names). Only a
// model that knows T2T's names for its parameters derives from it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "t2t/model/tf_sources.h"

namespace t2t {

class T2TModel;
class TFCheckpointReader;

class TensorFlowImport {
 public:
  virtual ~TensorFlowImport() = default;

  // Sets every parameter from the checkpoint. target_space_id: the
  // problem's row of T2T's target_space_embedding (kT2TTargetSpace for
  // T2T's translation problems). Throws t2t::Error naming what is missing.
  virtual void load_tensorflow(const TFCheckpointReader& reader, int64_t target_space_id) = 0;

  // What T2T's trainer keeps beside each of those variables (an optimizer's
  // slots, named prefix + variable + suffix: Adam's first moments are
  // "training/LazyAdam/" + name + "/m"), laid out as this model's
  // parameters: (parameter name, float32 tensor on the CPU) for every
  // parameter. Throws t2t::Error naming the checkpoint and the variables
  // missing.
  virtual std::vector<std::pair<std::string, at::Tensor>> tensorflow_slots(
      const TFCheckpointReader& reader, int64_t target_space_id, const std::string& prefix,
      const std::string& suffix) const = 0;

  // Which of T2T's variables make each parameter (tf_sources.h), for a
  // checkpoint that holds the variables `has` says. Throws t2t::Error when a
  // parameter has no counterpart, or the checkpoint shares differently.
  virtual TFSources tensorflow_sources(const TFHas& has, int64_t target_space_id) const = 0;
};

// The model's TensorFlowImport side; throws t2t::Error naming the model
// when it cannot read T2T's checkpoints.
TensorFlowImport& tensorflow_import(T2TModel& model);
const TensorFlowImport& tensorflow_import(const T2TModel& model);

}  // namespace t2t
