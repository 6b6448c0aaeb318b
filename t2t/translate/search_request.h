// A caller's search settings on top of a translator's, applied the same
// way for every front end.
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

// Sets how many hypotheses a search returns; more than one turns stop_early
// off, as T2T's return_beams does.
void return_hypotheses(SearchOptions& search, int64_t n);

// `base` with the request on top, checked (check_search_options) so that a
// bad request fails alone, before it shares a batch. Throws OptionError
// naming the field at fault.
SearchOptions apply_search_request(const SearchOptions& base, const SearchRequest& request);

}  // namespace t2t
