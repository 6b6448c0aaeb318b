// The server's JSON: what POST /v1/translate accepts, checked field by
// field so that a bad request is told exactly what is wrong, and what it
// answers. Free of LibTorch and of HTTP: the tests feed it bodies directly.
//
//   request:  {"text": ["...", ...], "beam_size": 4, "alpha": 0.6, "n_best": 1,
//              "patience": 0}
//             text is required; the rest default to the server's settings.
//   answer:   {"translations": ["...", ...], "scores": [..], "model_step": N}
//             in the order of "text"; with n_best > 1 each entry is a list
//             of up to n_best hypotheses (best first) and their scores.
//   error:    {"error": "what is wrong"}
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/search/search_options.h"
#include "t2t/translate/translation.h"

namespace t2t {

// A request the server cannot take, with the HTTP status to answer.
struct ApiError : std::runtime_error {
  ApiError(int status, const std::string& message) : std::runtime_error(message), status(status) {}
  int status;
};

struct TranslateLimits {
  int64_t max_request_sentences = 64;  // over: 413
  int64_t max_beam_size = 16;          // over: 400
};

struct TranslateRequest {
  std::vector<std::string> texts;
  std::optional<int64_t> beam_size;
  std::optional<double> alpha;
  std::optional<int64_t> n_best;
  std::optional<double> patience;  // SearchOptions::patience
};

// Parses and checks a request body. Throws ApiError: 400 for a body that is
// not JSON (invalid UTF-8 included), not an object, with a field of the
// wrong type or out of range, or an unknown field; 413 for more sentences
// than max_request_sentences, which `spell` writes as the server's option
// (null: as named).
TranslateRequest parse_translate_request(const std::string& body, const TranslateLimits& limits,
                                         const OptionSpelling& spell = nullptr);

// The server's search with the request's options on top, by the library's
// one rule (apply_search_request, t2t/translate/search_request.h). Throws
// ApiError (400) naming the field at fault, e.g. n_best above the beam size
// in effect.
SearchOptions request_search(const TranslateRequest& request, const SearchOptions& server);

std::string translate_response(const std::vector<Translation>& translations, int64_t n_best,
                               int64_t model_step);

// {"error": message}
std::string error_body(const std::string& message);

}  // namespace t2t
