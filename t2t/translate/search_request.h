// A caller's search settings on top of a translator's, applied the same
// way for every front end.
#pragma once

#include <cstdint>
#include <optional>

#include "t2t/search/search_options.h"
#include "t2t/translate/glossary.h"

namespace t2t {

// What a caller may change per call; unset fields keep the translator's.
struct SearchRequest {
  std::optional<int64_t> beam_size;
  std::optional<double> alpha;
  std::optional<int64_t> n_best;   // hypotheses returned per sentence (default 1)
  std::optional<double> patience;  // SearchOptions::patience
  std::optional<int64_t> no_repeat_ngram_size;  // SearchOptions::no_repeat_ngram_size
  std::optional<double> repetition_penalty;     // SearchOptions::repetition_penalty
  // Word alignments with each hypothesis (Translation::alignments).
  std::optional<bool> alignment;
  // Hard alignments: >= 1 each target word's likeliest source word, below
  // every pair with at least this weight (Marian's rule).
  std::optional<double> alignment_threshold;
  // Terms of this call only, used as the translator's glossary is (both
  // apply).
  std::vector<GlossaryEntry> glossary;
};

// Sets how many hypotheses a search returns; more than one turns stop_early
// off, as T2T's return_beams does.
void return_hypotheses(SearchOptions& search, int64_t n);

// `base` with the request on top, checked (check_search_options) so that a
// bad request fails alone, before it shares a batch. Throws OptionError
// naming the field at fault.
SearchOptions apply_search_request(const SearchOptions& base, const SearchRequest& request);

}  // namespace t2t
