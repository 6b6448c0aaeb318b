// T2T's sets of the Evolved Transformer (evolved_transformer.py), for the
// Adam optimizer: the Transformer's sets with fewer, deeper cells and a
// cosine decay in place of the inverse square root.
#include "hparams/transformer_hparams.h"
#include "t2t/core/hparams.h"

#include <cmath>

namespace t2t {
namespace {

// add_evolved_transformer_hparams: an Evolved Transformer cell is about two
// of the Transformer's layers deep, so the stacks are about half as many;
// the rate decays over training by a single cosine cycle (which reads the
// trainer's train_steps), the constant scaled to keep the peak rate.
HParams evolved(HParams hp) {
  hp.set("num_encoder_layers", 3);
  hp.set("num_decoder_layers", 4);
  hp.set("learning_rate_constant",
         hp.get_float("learning_rate_constant") /
             std::sqrt(hp.get_float("learning_rate_warmup_steps")));
  hp.set("learning_rate_schedule",
         "constant*linear_warmup*single_cycle_cos_decay*rsqrt_hidden_size");
  return hp;
}

HParams evolved_transformer_tiny() {
  HParams hp = evolved(transformer_tiny());
  hp.set("learning_rate_schedule", "constant*single_cycle_cos_decay");
  return hp;
}

HParams evolved_transformer_base() { return evolved(transformer_base()); }

HParams evolved_transformer_big() { return evolved(transformer_big()); }

HParams evolved_transformer_deep() {
  HParams hp = evolved(transformer_big());
  hp.set("num_encoder_layers", 9);
  hp.set("num_decoder_layers", 10);
  hp.set("hidden_size", 640);
  return hp;
}

}  // namespace

T2T_REGISTER_HPARAMS(evolved_transformer_tiny);
T2T_REGISTER_HPARAMS(evolved_transformer_base);
T2T_REGISTER_HPARAMS(evolved_transformer_big);
T2T_REGISTER_HPARAMS(evolved_transformer_deep);

}  // namespace t2t
