#include "t2t/train/tf_adam_state.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/string_util.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"

namespace t2t {
namespace {

struct SlotNames {
  std::string prefix, m_suffix, v_suffix;
};

SlotNames slot_names(const TFCheckpointReader& reader) {
  if (reader.has("training/LazyAdam/iter")) return {"training/LazyAdam/", "/m", "/v"};
  if (reader.has("training/beta1_power")) return {"training/", "/Adam", "/Adam_1"};
  throw OptionError("warm_start_from",
                    "T2T checkpoint " + reader.prefix() +
                        " has no Adam state (neither training/LazyAdam/iter nor "
                        "training/beta1_power): was it written by T2T's trainer with "
                        "optimizer=adam? To start afresh from its weights, use "
                        "{warm_start_from} instead.");
}

}  // namespace

int64_t tf_adam_steps(const TFCheckpointReader& reader, const HParams& hp) {
  const SlotNames names = slot_names(reader);
  if (names.m_suffix == "/m") return reader.read_scalar_int("training/LazyAdam/iter");
  const double beta1 = hp.get_float("optimizer_adam_beta1");
  const std::vector<float> power = reader.read_floats("training/beta1_power");
  if (power.size() != 1 || !(power[0] > 0) || !(beta1 > 0 && beta1 < 1))
    throw Error("T2T checkpoint " + reader.prefix() +
                ": training/beta1_power cannot give the step count with optimizer_adam_beta1=" +
                std::to_string(beta1));
  return std::llround(std::log(static_cast<double>(power[0])) / std::log(beta1));
}

void load_adam_state_from_tf(torch::optim::Optimizer& optimizer, T2TModel& model,
                             const TFCheckpointReader& reader, const HParams& hp,
                             int64_t target_space_id) {
  const SlotNames slots = slot_names(reader);
  const int64_t steps = tf_adam_steps(reader, hp);
  std::vector<std::pair<std::string, torch::Tensor>> m, v;
  try {
    const TensorFlowImport& tf = tensorflow_import(model);
    m = tf.tensorflow_slots(reader, target_space_id, slots.prefix, slots.m_suffix);
    v = tf.tensorflow_slots(reader, target_space_id, slots.prefix, slots.v_suffix);
  } catch (const Error& e) {
    throw Error(std::string("Adam's moments: ") + e.what());
  }
  torch::NoGradGuard no_grad;
  auto params = model.named_parameters();
  auto& state = optimizer.state();
  for (size_t i = 0; i < m.size(); ++i) {
    const torch::Tensor& p = params[m[i].first];
    if (m[i].second.sizes() != p.sizes() || v[i].second.sizes() != p.sizes())
      throw Error("T2T checkpoint " + reader.prefix() + ": Adam's moments of " + m[i].first +
                  " do not have the parameter's shape");
    auto fresh = std::make_unique<torch::optim::AdamParamState>();
    fresh->step(steps);
    fresh->exp_avg(m[i].second.to(p.device(), p.scalar_type()));
    fresh->exp_avg_sq(v[i].second.to(p.device(), p.scalar_type()));
    state[p.unsafeGetTensorImpl()] = std::move(fresh);
  }
}

}  // namespace t2t
