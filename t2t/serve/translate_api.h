// The JSON of POST /v1/translate, checked field by field. Free of LibTorch
// and HTTP.
//
//   request:  {"text": ["...", ...], "beam_size": 4, "alpha": 0.6, "n_best": 1,
//              "patience": 0, "no_repeat_ngram_size": 0, "repetition_penalty": 1,
//              "prefix": ["...", ...], "constraints": [["term", ...], ...],
//              "glossary": [["source term", "target term"], ...],
//              "alignment": false, "alignment_threshold": 1}
//             text is required; prefix and constraints, when given, hold one
//             entry per text ("" and [] for none); the rest default to the
//             server's settings.
//   answer:   {"translations": ["...", ...], "scores": [..], "model_step": N}
//             in the order of "text"; with n_best > 1 each entry is a list
//             of up to n_best hypotheses (best first) and their scores.
//             With alignment: "alignments", per text (per hypothesis with
//             n_best > 1) {"source_words", "target_words", "hard": [[i, j],
//             ...], "soft": [[...], ...]}. With terms: "constraints" (per
//             text, the terms used) and "constraints_met" (per text, per
//             term; per hypothesis with n_best > 1).
//   error:    {"error": "what is wrong"}
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/search/search_options.h"
#include "t2t/translate/glossary.h"
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
  std::optional<int64_t> no_repeat_ngram_size;
  std::optional<double> repetition_penalty;
  std::optional<bool> alignment;
  std::optional<double> alignment_threshold;
  std::vector<SourceGuide> guides;  // one per text, or none
  std::vector<GlossaryEntry> glossary;
};

// Throws ApiError: 400 for a body that is not a JSON object (invalid UTF-8
// and numbers beyond a double included, or nested more than 32 deep), or
// has an unknown field or one of the wrong type or out of range; 413 for
// more than max_request_sentences, which `spell` writes as the server's
// option (null: as named).
TranslateRequest parse_translate_request(const std::string& body, const TranslateLimits& limits,
                                         const OptionSpelling& spell = nullptr);

// A 400 whose message names the request's JSON fields ("beam_size" in
// quotes) where `e` names options.
ApiError request_error(const OptionError& e);

// The server's search with the request on top (apply_search_request).
// Throws ApiError (400) naming the field at fault.
SearchOptions request_search(const TranslateRequest& request, const SearchOptions& server);

std::string translate_response(const std::vector<Translation>& translations, int64_t n_best,
                               int64_t model_step);

// {"error": message}
std::string error_body(const std::string& message);

}  // namespace t2t
