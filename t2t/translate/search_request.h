// A caller's search settings on top of a translator's (a server request's
// fields, a Python call's arguments), applied by one function so that every
// front end follows the same rules.
#pragma once

#include <cstdint>
#include <optional>

#include "t2t/search/search_options.h"

namespace t2t {

// What a caller may change per call; unset fields keep the translator's.
struct SearchRequest {
  std::optional<int64_t> beam_size;
  std::optional<double> alpha;
  std::optional<int64_t> n_best;   // hypotheses returned per sentence (default 1)
  std::optional<double> patience;  // SearchOptions::patience
};

// Sets how many hypotheses a search returns. More than one turns T2T's
// stop_early off (as T2T's return_beams does): the lower hypotheses must
// settle too, not only the best.
void return_hypotheses(SearchOptions& search, int64_t n);

// `base` with the request on top, checked as beam_search checks its options
// (check_search_options) so that a bad request fails alone, before it
// shares a batch with others. Throws OptionError naming the field at fault
// (beam_size, n_best, alpha, patience).
SearchOptions apply_search_request(const SearchOptions& base, const SearchRequest& request);

}  // namespace t2t
