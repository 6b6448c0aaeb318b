// What a search is asked to do, apart from the model and the inputs. Kept
// free of LibTorch so that option parsing and the tests of it stay light.
#pragma once

#include <cstdint>

namespace t2t {

// How greedy decoding picks each next token, T2T's model hparams
// sampling_method, sampling_temp and sampling_keep_top_k (read once by
// sampling_options(), decode_options.h).
struct SamplingOptions {
  // False: the most likely id (T2T's "argmax"). True ("random"): an id drawn
  // from softmax(logits / temperature) over the keep_top_k likeliest ids.
  bool random = false;
  double temperature = 1.0;  // 0: argmax even when random
  int64_t keep_top_k = -1;   // -1: every id
  // Sentence k of a caller's input draws its step-t number from (seed, k, t)
  // alone (sampling.h), so its sample does not depend on its batch.
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
  // T2T's rule instead: every sentence of a batch gets the batch's padded
  // input width + extra_length, so that a model that does not stop gives
  // T2T's outputs (which then depend on the sentence's batch-mates).
  bool batch_decode_length = false;
  // Hypotheses returned per sentence, best first (1..beam_size): the
  // finished ones, then, when fewer than this many finished, the best alive
  // ones (T2T returns the alive beams when none finished, and empty slots
  // when only some did). Fewer only when the sentence has fewer real ones.
  int64_t num_return = 1;
  // T2T's stop_early: stop a sentence once no alive hypothesis can beat its
  // best finished one. Off, a sentence runs until no alive hypothesis can
  // enter any of its beam_size finished ones (or to its decode length):
  // T2T turns it off when more than one beam is returned, since the lower
  // beams could still change, and so does decode_options (decode_options.h).
  bool stop_early = true;
  // 0: T2T's stopping test alone, so that the result is T2T's. > 0: a
  // sentence also settles once the best candidate of one of its steps has
  // ended in EOS and round(patience x beam_size) hypotheses have ended
  // among the beam_size best candidates of its steps: the rule of
  // CTranslate2 (its `patience`, with no length penalty in its search) and
  // of "beam search patience" (Kasai et al., 2022). T2T's test waits until
  // no alive hypothesis could beat the best finished one even at the decode
  // length, which is far looser, so this stops a sentence steps earlier;
  // its result is the best finished so far, which the longer search could
  // still have displaced.
  double patience = 0;
  // Take settled sentences out of the batch. Off only to check that taking
  // them out changes no result.
  bool drop_finished = true;
  // Greedy decoding only (beam_size 1); beam search refuses random sampling,
  // as T2T samples only when it decodes greedily.
  SamplingOptions sampling;
};

}  // namespace t2t
