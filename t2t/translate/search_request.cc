#include "t2t/translate/search_request.h"

#include <string>

#include "t2t/core/error.h"
#include "t2t/search/search_options.h"

namespace t2t {

void return_hypotheses(SearchOptions& search, int64_t n) {
  search.num_return = n;
  if (n > 1) search.stop_early = false;
}

SearchOptions apply_search_request(const SearchOptions& base, const SearchRequest& request) {
  SearchOptions search = base;
  if (request.beam_size) {
    if (*request.beam_size < 1)
      throw OptionError("beam_size", "{beam_size} must be at least 1, not " +
                                         std::to_string(*request.beam_size));
    search.beam_size = *request.beam_size;
  }
  if (request.alpha) search.alpha = *request.alpha;
  if (request.patience) search.patience = *request.patience;
  if (request.no_repeat_ngram_size) search.no_repeat_ngram_size = *request.no_repeat_ngram_size;
  if (request.repetition_penalty) search.repetition_penalty = *request.repetition_penalty;
  if (request.alignment_threshold) search.alignment_threshold = *request.alignment_threshold;
  if (request.alignment) search.alignment = *request.alignment;
  const int64_t n_best = request.n_best.value_or(1);
  if (n_best < 1 || n_best > search.beam_size)
    throw OptionError("n_best", "{n_best} is " + std::to_string(n_best) +
                                    ", but a search returns 1 to {beam_size} (" +
                                    std::to_string(search.beam_size) + ") hypotheses");
  return_hypotheses(search, n_best);
  check_search_options(search);
  return search;
}

}  // namespace t2t
