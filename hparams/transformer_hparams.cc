#include "hparams/transformer_hparams.h"

#include "t2t/model/common_hparams.h"

namespace t2t {

// The published "Attention is all you need" base model: post-norm ("dan"),
// Adam beta2 0.98, noam schedule with 4000 warmup steps.
HParams transformer_base_v1() {
  HParams hp = basic_params1();
  hp.set("norm_type", "layer");
  hp.set("hidden_size", 512);
  hp.set("batch_size", 4096);
  hp.set("max_length", 256);
  hp.set("clip_grad_norm", 0.0);  // no clipping
  hp.set("optimizer_adam_epsilon", 1e-9);
  hp.set("learning_rate_schedule", "legacy");
  hp.set("learning_rate_decay_scheme", "noam");
  hp.set("learning_rate", 0.1);
  hp.set("learning_rate_warmup_steps", 4000);
  hp.set("initializer_gain", 1.0);
  hp.set("num_hidden_layers", 6);
  hp.set("initializer", "uniform_unit_scaling");
  hp.set("weight_decay", 0.0);
  hp.set("optimizer_adam_beta1", 0.9);
  hp.set("optimizer_adam_beta2", 0.98);
  hp.set("label_smoothing", 0.1);
  hp.set("shared_embedding_and_softmax_weights", true);
  // t2t's own: the softmax stays tied to the target embedding where the
  // input and target vocabularies differ in size, which T2T unties
  // (README, "Differences from T2T"). Off, as in T2T.
  hp.add("shared_target_embedding_and_softmax_weights", false);
  hp.set("symbol_modality_num_shards", 16);
  hp.add("filter_size", int64_t{2048});
  // 0: fall back on num_hidden_layers / hidden_size.
  hp.add("num_encoder_layers", int64_t{0});
  hp.add("num_decoder_layers", int64_t{0});
  hp.add("num_heads", int64_t{8});
  hp.add("attention_key_channels", int64_t{0});
  hp.add("attention_value_channels", int64_t{0});
  hp.add("ffn_layer", std::string("dense_relu_dense"));
  hp.add("attention_dropout", 0.0);
  hp.add("relu_dropout", 0.0);
  hp.add("pos", std::string("timing"));
  hp.add("causal_decoder_self_attention", true);
  // T2T's speed-up of the encoder's feed-forward layers, same results:
  // either value trains the same model here (honoured_hparams.cc).
  hp.add("use_pad_remover", true);
  hp.add("self_attention_type", std::string("dot_product"));
  hp.add("max_relative_position", int64_t{0});
  hp.add("use_target_space_embedding", true);
  return hp;
}

// Pre-norm ("n" before, "da" after each sub-layer) with dropout everywhere.
HParams transformer_base_v2() {
  HParams hp = transformer_base_v1();
  hp.set("layer_preprocess_sequence", "n");
  hp.set("layer_postprocess_sequence", "da");
  hp.set("layer_prepostprocess_dropout", 0.1);
  hp.set("attention_dropout", 0.1);
  hp.set("relu_dropout", 0.1);
  hp.set("learning_rate_warmup_steps", 8000);
  hp.set("learning_rate", 0.2);
  return hp;
}

// T2T's current default: v2 with beta2 0.997 and the factored schedule
// 2.0 * min(1, step/warmup) * max(step, warmup)^-0.5 * hidden_size^-0.5.
HParams transformer_base_v3() {
  HParams hp = transformer_base_v2();
  hp.set("optimizer_adam_beta2", 0.997);
  hp.set("learning_rate_schedule", "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size");
  hp.set("learning_rate_constant", 2.0);
  return hp;
}

HParams transformer_base() { return transformer_base_v3(); }

HParams transformer_tiny() {
  HParams hp = transformer_base();
  hp.set("num_hidden_layers", 2);
  hp.set("hidden_size", 128);
  hp.set("filter_size", 512);
  hp.set("num_heads", 4);
  return hp;
}

HParams transformer_big() {
  HParams hp = transformer_base();
  hp.set("hidden_size", 1024);
  hp.set("filter_size", 4096);
  // Halved so that the model fits into a GPU's memory.
  hp.set("batch_size", 2048);
  hp.set("num_heads", 16);
  hp.set("layer_prepostprocess_dropout", 0.3);
  return hp;
}

namespace {

HParams transformer_big_single_gpu() {
  HParams hp = transformer_big();
  hp.set("layer_prepostprocess_dropout", 0.1);
  hp.set("learning_rate_warmup_steps", 16000);
  return hp;
}

HParams transformer_base_single_gpu() {
  HParams hp = transformer_base();
  hp.set("batch_size", 1024);
  hp.set("learning_rate_schedule", "constant*linear_warmup*rsqrt_decay");
  hp.set("learning_rate_constant", 0.1);
  hp.set("learning_rate_warmup_steps", 16000);
  return hp;
}

HParams transformer_base_multistep8() {
  HParams hp = transformer_base();
  hp.set("optimizer", "multistep_adam");
  hp.set("optimizer_multistep_accumulate_steps", 8);
  return hp;
}

HParams transformer_small() {
  HParams hp = transformer_base();
  hp.set("num_hidden_layers", 2);
  hp.set("hidden_size", 256);
  hp.set("filter_size", 1024);
  hp.set("num_heads", 4);
  return hp;
}

// Relative position self-attention (Shaw et al., 2018) in place of the
// timing signal: learned embeddings of distances clipped at 20. T2T's
// relative sets are its plain ones with these three values.
HParams with_relative_positions(HParams hp) {
  hp.set("pos", "none");
  hp.set("self_attention_type", "dot_product_relative");
  hp.set("max_relative_position", 20);
  return hp;
}

HParams transformer_relative() { return with_relative_positions(transformer_base()); }
HParams transformer_relative_tiny() { return with_relative_positions(transformer_tiny()); }
HParams transformer_relative_big() { return with_relative_positions(transformer_big()); }

// T2T's smallest set, for tests: 2 layers of 16 channels.
HParams transformer_test() {
  HParams hp = transformer_base();
  hp.set("num_hidden_layers", 2);
  hp.set("hidden_size", 16);
  hp.set("filter_size", 8);
  hp.set("num_heads", 2);
  return hp;
}

}  // namespace

T2T_REGISTER_HPARAMS(transformer_base_v1);
T2T_REGISTER_HPARAMS(transformer_base_v2);
T2T_REGISTER_HPARAMS(transformer_base_v3);
T2T_REGISTER_HPARAMS(transformer_base);
T2T_REGISTER_HPARAMS(transformer_big);
T2T_REGISTER_HPARAMS(transformer_big_single_gpu);
T2T_REGISTER_HPARAMS(transformer_base_single_gpu);
T2T_REGISTER_HPARAMS(transformer_base_multistep8);
T2T_REGISTER_HPARAMS(transformer_small);
T2T_REGISTER_HPARAMS(transformer_tiny);
T2T_REGISTER_HPARAMS(transformer_test);
T2T_REGISTER_HPARAMS(transformer_relative);
T2T_REGISTER_HPARAMS(transformer_relative_tiny);
T2T_REGISTER_HPARAMS(transformer_relative_big);

}  // namespace t2t
