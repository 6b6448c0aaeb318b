// Adam's moments and step count from a checkpoint T2T's trainer wrote. Both
// layouts are read: TensorFlow 2's LazyAdam (training/LazyAdam/<variable>/m
// and /v, step training/LazyAdam/iter) and TensorFlow 1's
// (training/<variable>/Adam and /Adam_1, training/beta1_power = beta1^step).
#pragma once

#include <cstdint>

namespace torch {
namespace optim {
class Optimizer;
}
}  // namespace torch

namespace t2t {

class HParams;
class TFCheckpointReader;
class T2TModel;

// The number of Adam updates the checkpoint's moments have seen. Throws
// t2t::Error naming the checkpoint when it holds neither layout's counter.
int64_t tf_adam_steps(const TFCheckpointReader& reader, const HParams& hp);

// Gives every parameter in `optimizer` (from make_optimizer()) T2T's
// moments and step count, through T2TModel::tensorflow_slots. Throws
// t2t::Error naming the checkpoint and the missing slots.
void load_adam_state_from_tf(torch::optim::Optimizer& optimizer, T2TModel& model,
                             const TFCheckpointReader& reader, const HParams& hp,
                             int64_t target_space_id);

}  // namespace t2t
