// What a search is asked to do, apart from the model and the inputs. No
// LibTorch.
#pragma once

#include <cstdint>

#include "t2t/model/attention_probe.h"

namespace t2t {

// How greedy decoding picks each next token: T2T's sampling_method,
// sampling_temp and sampling_keep_top_k.
struct SamplingOptions {
  // False: the most likely id (T2T's "argmax"). True ("random"): an id drawn
  // from softmax(logits / temperature) over the keep_top_k likeliest ids.
  bool random = false;
  double temperature = 1.0;  // 0: argmax even when random
  int64_t keep_top_k = -1;   // -1: every id
  // See sample_uniform (sampling.h).
  uint64_t seed = 0;

  // Whether any token is drawn at random.
  bool draws() const { return random && temperature > 0; }
};

struct SearchOptions {
  int64_t beam_size = 4;  // 1: greedy
  double alpha = 0.6;     // length penalty exponent
  // A sentence of n input tokens (EOS included) gets at most
  // n + extra_length output tokens (EOS included).
  int64_t extra_length = 100;
  // T2T's rule instead: the batch's padded input width + extra_length.
  bool batch_decode_length = false;
  // Hypotheses returned per sentence (1..beam_size), best first: finished
  // ones, then the best alive ones.
  int64_t num_return = 1;
  // T2T's stop_early: stop once no alive hypothesis can beat the best
  // finished one. Off: once none can enter any of the beam_size finished
  // ones (needed when more than one is returned).
  bool stop_early = true;
  // 0: T2T's stopping test alone. > 0: a sentence also settles once a
  // step's best candidate ended in EOS and round(patience x beam_size)
  // hypotheses have ended (CTranslate2's `patience`; Kasai et al., 2022).
  // Earlier than T2T's test, so a longer search could still have changed
  // the result.
  double patience = 0;
  // Take settled sentences out of the batch (off only for tests).
  bool drop_finished = true;
  // Greedy decoding only (beam_size 1), as in T2T.
  SamplingOptions sampling;
  // Repetition guards, off by default. No n-gram of this size twice in a
  // hypothesis (fairseq's no_repeat_ngram_size); 0: off.
  int64_t no_repeat_ngram_size = 0;
  // > 1: the logits of ids a hypothesis already holds are penalised (CTRL's
  // repetition penalty, CTranslate2's repetition_penalty); 1: off.
  double repetition_penalty = 1.0;
  // On: every hypothesis carries the attention `alignment_probe` picks, of
  // each of its steps (Hypothesis::attention): what word alignments are
  // read from.
  bool alignment = false;
  AttentionProbe alignment_probe;
  // How hard word alignments are read from it: >= 1 each target word's
  // likeliest source word; below, every pair with at least this weight.
  double alignment_threshold = 1.0;
};

// Throws OptionError, naming the option, for options the search cannot run.
void check_search_options(const SearchOptions& options);

}  // namespace t2t
