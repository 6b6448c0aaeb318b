#include "t2t/model/common_hparams.h"

namespace t2t {

// Values as in tensor2tensor/layers/common_hparams.py; only the keys that t2t
// reads are carried, under T2T's names, so T2T command lines keep working.
// A few are carried for T2T's sake but not read as T2T reads them (dropout,
// symbol_modality_num_shards, weight_dtype, activation_dtype):
// t2t/model/honoured_hparams.cc says which of their values are honoured, and
// refuses the others.
HParams basic_params1() {
  HParams hp;
  // Batching. batch_size counts tokens per worker for text problems.
  hp.add("batch_size", int64_t{4096});
  hp.add("use_fixed_batch_size", false);
  hp.add("min_length", int64_t{0});
  hp.add("max_length", int64_t{0});  // 0: use batch_size
  hp.add("min_length_bucket", int64_t{8});
  hp.add("length_bucket_step", 1.1);
  hp.add("eval_drop_long_sequences", false);
  // Training batches drawn at random from a buffer of this many (the
  // reader's batch shuffle); 0 or 1: none.
  hp.add("batch_shuffle_size", int64_t{512});
  hp.add("max_input_seq_length", int64_t{0});
  hp.add("max_target_seq_length", int64_t{0});
  // Model shape.
  hp.add("num_hidden_layers", int64_t{4});
  hp.add("hidden_size", int64_t{64});
  // Read by no t2t model (nor by T2T's transformer, whose dropouts are its
  // own); a transformer refuses a change of it.
  hp.add("dropout", 0.2);
  hp.add("multiply_embedding_mode", std::string("sqrt_depth"));
  hp.add("shared_embedding_and_softmax_weights", false);
  // T2T's embedding split over parameter servers: any value >= 1 gives the
  // same model here, one matrix.
  hp.add("symbol_modality_num_shards", int64_t{1});
  hp.add("symbol_dropout", 0.0);
  // Pre/post-processing of each sub-layer: letters a (residual add),
  // n (norm), d (dropout); "none" for nothing.
  hp.add("layer_preprocess_sequence", std::string("none"));
  hp.add("layer_postprocess_sequence", std::string("dan"));
  hp.add("layer_prepostprocess_dropout", 0.1);
  hp.add("norm_type", std::string("layer"));
  hp.add("norm_epsilon", 1e-6);
  // Initialisation.
  hp.add("initializer", std::string("orthogonal"));
  hp.add("initializer_gain", 1.5);
  // Loss and optimisation.
  hp.add("label_smoothing", 0.1);
  hp.add("optimizer", std::string("adam"));
  hp.add("optimizer_adam_epsilon", 1e-6);
  hp.add("optimizer_adam_beta1", 0.85);
  hp.add("optimizer_adam_beta2", 0.997);
  hp.add("optimizer_multistep_accumulate_steps", int64_t{0});
  hp.add("clip_grad_norm", 2.0);
  hp.add("weight_decay", 1e-6);
  // t2t's own: guided alignment (Marian's), a cost pulling one head of the
  // encoder-decoder attention towards the word alignments in the training
  // shards (t2t-datagen's train_alignments), so that the alignments decoding
  // reports are good. Weight 0: off. Layer -1: the last; head -1: the mean
  // of all heads. Decoding reads the same head for alignments.
  hp.add("guided_alignment_weight", 0.0);
  hp.add("guided_alignment_layer", int64_t{-1});
  hp.add("guided_alignment_head", int64_t{0});
  // Learning rate: a product of named factors (see learning_rate_schedule),
  // or "legacy" with learning_rate_decay_scheme.
  hp.add("learning_rate_schedule", std::string("legacy"));
  hp.add("learning_rate_constant", 1.0);
  hp.add("learning_rate_decay_scheme", std::string("none"));
  hp.add("learning_rate_decay_steps", int64_t{5000});
  hp.add("learning_rate_decay_staircase", false);
  hp.add("learning_rate_decay_rate", 1.0);
  hp.add("learning_rate_warmup_steps", int64_t{100});
  hp.add("learning_rate_cosine_cycle_steps", int64_t{250000});
  hp.add("learning_rate", 0.1);
  // Decoding.
  hp.add("sampling_method", std::string("argmax"));
  hp.add("sampling_temp", 1.0);
  hp.add("sampling_keep_top_k", int64_t{-1});  // -1: sample from every id
  // Precision of activations and weights. activation_dtype bfloat16 or
  // float16 trains under autocast, as --mixed_precision=bf16 / fp16 do
  // (effective_mixed_precision); weights stay float32, the only weight_dtype.
  hp.add("activation_dtype", std::string("float32"));
  hp.add("weight_dtype", std::string("float32"));
  return hp;
}

}  // namespace t2t
