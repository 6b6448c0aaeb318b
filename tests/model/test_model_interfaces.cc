// The model interface stays what training and decoding need; int8, packed
// weights, CUDA graphs and T2T's checkpoints are interfaces a model opts into.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "t2t/core/error.h"
#include "t2t/model/inference_model.h"
#include "t2t/model/model_registry.h"
#include "t2t/model/t2t_model.h"
#include "t2t/model/tensorflow_import.h"

namespace {

// The least a model must be: teacher-forced logits and incremental steps.
class BareModel : public t2t::T2TModel {
 public:
  torch::Tensor forward(const torch::Tensor& inputs, const torch::Tensor& targets) override {
    return torch::zeros({inputs.size(0), targets.size(1), 4});
  }
  std::unique_ptr<t2t::DecoderState> start_decoding(const torch::Tensor& inputs) override {
    auto state = std::make_unique<t2t::DecoderState>();
    state->encoder_output = torch::zeros({inputs.size(0), 0, 1});
    return state;
  }
  torch::Tensor decode_step(t2t::DecoderState& state, const torch::Tensor& last_ids) override {
    ++state.length;
    return torch::zeros({last_ids.size(0), 4});
  }
};

}  // namespace

TEST_CASE("a model without the inference or TensorFlow interfaces is refused by name",
          "[model_interfaces]") {
  BareModel model;
  CHECK(t2t::as_inference_model(model) == nullptr);
  CHECK(t2t::as_inference_model(static_cast<const t2t::T2TModel&>(model)) == nullptr);
  CHECK_THROWS_AS(t2t::inference_model(model, "int8 weights"), t2t::Error);
  CHECK_THROWS_WITH(t2t::inference_model(model, "int8 weights"),
                    Catch::Contains("has no int8 weights"));
  CHECK_THROWS_WITH(t2t::tensorflow_import(model),
                    Catch::Contains("cannot read Tensor2Tensor's TensorFlow checkpoints"));

  // Training and decoding need nothing more.
  const auto logits = model.forward_labelled(torch::ones({2, 3}, torch::kLong),
                                             torch::tensor({{1, 2, 0}, {3, 0, 0}}));
  CHECK(logits.size(0) == 3);
  auto state = model.start_decoding(torch::ones({2, 3}, torch::kLong));
  model.decode_step(*state, torch::zeros({2}, torch::kLong));
  model.reorder_state(*state, torch::tensor({1}));
  CHECK(state->batch_size() == 1);
}

TEST_CASE("the registered transformer offers both interfaces", "[model_interfaces]") {
  auto hp = t2t::hparams_registry().get("transformer_tiny")();
  const auto model = t2t::model_registry().get("transformer")(hp, t2t::FeatureInfo{16, 16, false});
  REQUIRE(model);
  auto* inference = t2t::as_inference_model(*model);
  REQUIRE(inference != nullptr);
  CHECK_FALSE(inference->quantized());
  CHECK(&t2t::inference_model(*model, "int8 weights") == inference);
  CHECK_NOTHROW(t2t::tensorflow_import(*model));
}
