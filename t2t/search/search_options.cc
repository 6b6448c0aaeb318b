#include "t2t/search/search_options.h"

#include <cmath>
#include <string>

#include "t2t/core/error.h"

namespace t2t {

void check_search_options(const SearchOptions& options) {
  if (options.beam_size < 1)
    throw OptionError("beam_size", "{beam_size} must be at least 1, got " +
                                       std::to_string(options.beam_size));
  if (options.num_return < 1 || options.num_return > options.beam_size)
    throw OptionError("n_best", "the number of hypotheses to return ({n_best}) must be in "
                                "1..{beam_size} (" + std::to_string(options.beam_size) +
                                    "), got " + std::to_string(options.num_return));
  if (options.sampling.random && options.beam_size > 1)
    throw OptionError("beam_size", "random sampling decodes greedily only ({beam_size} 1, as in "
                                   "T2T), got {beam_size} " + std::to_string(options.beam_size));
  if (!(options.patience >= 0) || !std::isfinite(options.patience))
    throw OptionError("patience", "{patience} must be a finite number >= 0 (0: T2T's stopping "
                                  "test alone), got " + std::to_string(options.patience));
  if (!(options.sampling.temperature >= 0))
    throw OptionError("sampling_temp", "the sampling temperature ({sampling_temp}) must be >= 0");
  if (options.no_repeat_ngram_size < 0)
    throw OptionError("no_repeat_ngram_size", "{no_repeat_ngram_size} must be >= 0 (0: off), got " +
                                                  std::to_string(options.no_repeat_ngram_size));
  if (!(options.repetition_penalty > 0) || !std::isfinite(options.repetition_penalty))
    throw OptionError("repetition_penalty", "{repetition_penalty} must be a finite number > 0 (1: "
                                            "off, above 1 penalises repeats), got " +
                                                std::to_string(options.repetition_penalty));
  if (!(options.alignment_threshold > 0 && options.alignment_threshold <= 1))
    throw OptionError("alignment_threshold",
                      "{alignment_threshold} must be in (0, 1] (1: each target word's likeliest "
                      "source word; below: every pair with at least that weight), got " +
                          std::to_string(options.alignment_threshold));
}

}  // namespace t2t
