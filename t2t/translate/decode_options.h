// T2T's decode hparams (tensor2tensor/utils/decoding.py: decode_hparams)
// and the typed options read from them.
#pragma once

#include <cstdint>
#include <optional>
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
  // CPU batches decoded side by side (parallel_batches.h); 0: one a thread.
  int parallel_batches = 0;
  // Alignments written in Marian's soft format rather than Pharaoh's.
  bool soft_alignment = false;
  // The decode hparams alignment_layer and alignment_head; unset: "auto"
  // (alignment_probe()).
  std::optional<int64_t> alignment_layer, alignment_head;
  // > 0: batches of at most this many source tokens (sentences x the
  // longest, padding included) instead of batch_size sentences.
  int64_t batch_tokens = 0;
};

// max_input_size's default: inputs of more tokens (EOS included) are cut.
constexpr int64_t kDefaultMaxInputSize = 1024;

// Throws OptionError naming the key for a value this decoder cannot honour.
// As T2T: batch_size 0 means 32; return_beams turns stop_early off;
// max_input_size -1 or 0 decodes inputs whole.
DecodeOptions decode_options(const HParams& decode_hparams);

// The attention word alignments read: the decode hparams' layer and head,
// else those a guided-alignment run trained (model hparams
// guided_alignment_layer and guided_alignment_head), else the last layer's
// mean over heads.
AttentionProbe alignment_probe(const DecodeOptions& options, const HParams& model_hparams);

// T2T's sampling_method ("argmax" or "random"), sampling_temp (>= 0; 0 =
// argmax) and sampling_keep_top_k (-1 = every id, else >= 1), with `seed`
// for the draws. A missing key keeps its default. Throws t2t::Error naming
// the hparam for a value out of range.
SamplingOptions sampling_options(const HParams& model_hparams, uint64_t seed);

// Throws OptionError naming beam_size for random sampling with beam_size >
// 1 (T2T samples only when greedy).
void check_sampling_search(const SearchOptions& search);

}  // namespace t2t
