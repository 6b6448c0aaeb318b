// What a search is asked to do, apart from the model and the inputs. Kept
// free of LibTorch so that option parsing and the tests of it stay light.
#pragma once

#include <cstdint>

namespace t2t {

struct SearchOptions {
  int64_t beam_size = 4;  // 1: greedy
  double alpha = 0.6;     // length penalty exponent
  // A sentence of n input tokens (EOS included) gets at most
  // n + extra_length output tokens (EOS included).
  int64_t extra_length = 100;
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
  // Take settled sentences out of the batch. Off only to check that taking
  // them out changes no result.
  bool drop_finished = true;
};

}  // namespace t2t
