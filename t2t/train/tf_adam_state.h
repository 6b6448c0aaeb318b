// Adam's moments and step count from a checkpoint written by T2T's trainer,
// so that training goes on from T2T's state as from t2t's own.
//
// T2T 1.15 on TensorFlow 2 trains with LazyAdam and names its slots
// training/LazyAdam/<variable>/m and /v, its step training/LazyAdam/iter;
// on TensorFlow 1 (tf.contrib's LazyAdamOptimizer) they are
// training/<variable>/Adam and /Adam_1, with the step kept as
// training/beta1_power = beta1^step. Both are read.
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

// Gives every parameter of `model` in `optimizer` (an Adam made by
// make_optimizer()) T2T's moments and step count, through the model's
// T2TModel::tensorflow_slots. Throws t2t::Error naming the checkpoint and
// the missing slots when some are not there.
void load_adam_state_from_tf(torch::optim::Optimizer& optimizer, T2TModel& model,
                             const TFCheckpointReader& reader, const HParams& hp,
                             int64_t target_space_id);

}  // namespace t2t
