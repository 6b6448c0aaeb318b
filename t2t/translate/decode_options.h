// Decoding options: T2T's --decode_hparams (names and defaults of
// tensor2tensor/utils/decoding.py: decode_hparams) and the typed options the
// decoder and the search take from them, read once here.
#pragma once

#include <cstdint>
#include <string>

#include "t2t/core/hparams.h"
#include "t2t/search/search_options.h"

namespace t2t {

// --decode_hparams with T2T's names and default values.
HParams default_decode_hparams();

struct DecodeOptions {
  SearchOptions search;
  int64_t batch_size = 32;  // sentences per batch
  bool return_beams = false;
  bool write_beam_scores = false;  // with return_beams only, as in T2T
  // Source ids kept per sentence, EOS included; longer inputs are cut with a
  // warning. 0: no limit.
  int64_t max_input_length = 0;
  std::string delimiter = "\n";  // between records, in and out
  int64_t num_samples = -1;      // dev split: decode at most this many (-1: all)
  bool log_results = true;       // log every input and output, as T2T does
  double progress_seconds = 10;  // between progress lines
  // On the CPU, batches decoded side by side (parallel_batches.h), sharing
  // LibTorch's threads; 0: one per thread. On CUDA one at a time.
  int parallel_batches = 0;
};

// max_input_size's default: inputs of more tokens (EOS included) are cut.
constexpr int64_t kDefaultMaxInputSize = 1024;

// From decode hparams (T2T's names, --decode_hparams on the command line).
// Throws OptionError for values this decoder cannot honour, naming the key.
//  - batch_size 0 means 32 sentences (T2T's decode_from_file default);
//  - return_beams returns beam_size hypotheses and, as T2T, turns
//    stop_early off: a sentence then runs until all its beams are settled,
//    not only the best;
//  - inputs of more than max_input_size tokens (EOS included; default
//    kDefaultMaxInputSize) are cut with a warning naming the line; -1 or 0
//    decodes them whole, as T2T does by default.
DecodeOptions decode_options(const HParams& decode_hparams);

// The model hparams that choose how greedy decoding picks its tokens, T2T's
// sampling_method ("argmax" or "random"), sampling_temp (>= 0; 0 = argmax)
// and sampling_keep_top_k (-1 = every id, else >= 1), with `seed` (the
// --random_seed) for the draws. A key the run's hparams lack (a run saved
// before it existed) keeps its default. Throws t2t::Error naming the
// hparam for a value out of range.
SamplingOptions sampling_options(const HParams& model_hparams, uint64_t seed);

// Refuses search settings that do not go together (OptionError naming
// beam_size): random sampling with beam_size > 1 (T2T samples only when it
// decodes greedily).
void check_sampling_search(const SearchOptions& search);

}  // namespace t2t
