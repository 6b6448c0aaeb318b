#include "t2t/serve/translate_api.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "t2t/core/error.h"
#include "t2t/translate/search_request.h"

namespace t2t {

using nlohmann::json;

namespace {

// An integer field: JSON integers only (not 4.0, not true).
int64_t integer_field(const json& value, const std::string& name, int64_t low, int64_t high) {
  if (!value.is_number_integer())
    throw ApiError(400, "\"" + name + "\" must be an integer, got " + std::string(value.type_name()));
  // Non-negative integers parse as unsigned, and may not fit an int64_t.
  const bool out_of_range =
      value.is_number_unsigned()
          ? (value.get<uint64_t>() > static_cast<uint64_t>(high) ||
             value.get<uint64_t>() < static_cast<uint64_t>(std::max<int64_t>(low, 0)))
          : (value.get<int64_t>() < low || value.get<int64_t>() > high);
  if (out_of_range)
    throw ApiError(400, "\"" + name + "\" must be between " + std::to_string(low) + " and " +
                            std::to_string(high) + ", got " + value.dump());
  return value.get<int64_t>();
}

// A number field (integer or not), finite and within [low, high].
double number_field(const json& value, const std::string& name, int64_t low, int64_t high) {
  if (!value.is_number())
    throw ApiError(400, "\"" + name + "\" must be a number, got " + std::string(value.type_name()));
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < static_cast<double>(low) || x > static_cast<double>(high))
    throw ApiError(400, "\"" + name + "\" must be between " + std::to_string(low) + " and " +
                            std::to_string(high) + ", got " + value.dump());
  return x;
}

// An array of strings.
std::vector<std::string> string_array(const json& value, const std::string& name) {
  if (!value.is_array())
    throw ApiError(400, "\"" + name + "\" must be an array of strings, got " +
                            std::string(value.type_name()));
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string())
      throw ApiError(400, "\"" + name + "\"[" + std::to_string(i) + "] must be a string, got " +
                              std::string(value[i].type_name()));
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

json alignment_json(const WordAlignment& a) {
  json hard = json::array();
  for (const auto& [i, j] : a.hard) hard.push_back({i, j});
  return json{{"source_words", a.source_words},
              {"target_words", a.target_words},
              {"hard", std::move(hard)},
              {"soft", a.soft}};
}

// A request nests three deep at most (the object, "constraints", a text's
// terms). nlohmann parses without recursion, but builds a value for each
// level before it finds a fault: a 1 MiB body of '[' takes ~40 MB, per
// request in flight. Deeper bodies are refused before they are parsed.
constexpr int kMaxJsonDepth = 32;

void check_depth(const std::string& body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : body) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw ApiError(400, "the body nests arrays and objects more than " +
                                std::to_string(kMaxJsonDepth) + " deep (a request needs 3)");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

json met_json(const std::vector<char>& met) {
  json out = json::array();
  for (char m : met) out.push_back(m != 0);
  return out;
}

}  // namespace

TranslateRequest parse_translate_request(const std::string& body, const TranslateLimits& limits,
                                         const OptionSpelling& spell) {
  check_depth(body);
  json doc;
  try {
    doc = json::parse(body);
  } catch (const json::exception& e) {
    // nlohmann's message names the byte and what it expected; invalid UTF-8
    // inside a string, and a number beyond a double (1e999), are reported
    // here too.
    throw ApiError(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!doc.is_object())
    throw ApiError(400, "the body must be a JSON object such as {\"text\": [\"Hello.\"]}, got " +
                            std::string(doc.type_name()));
  TranslateRequest request;
  bool has_text = false;
  std::optional<std::vector<std::string>> prefixes;
  std::optional<std::vector<std::vector<std::string>>> constraints;
  for (const auto& [key, value] : doc.items()) {
    if (key == "text") {
      if (!value.is_array())
        throw ApiError(400, "\"text\" must be an array of strings, got " +
                                std::string(value.type_name()));
      if (value.empty()) throw ApiError(400, "\"text\" is empty: give at least one sentence");
      if (static_cast<int64_t>(value.size()) > limits.max_request_sentences)
        throw ApiError(413, "\"text\" has " + std::to_string(value.size()) +
                                " sentences, more than this server takes in one request (" +
                                std::to_string(limits.max_request_sentences) + ", " +
                                (spell ? spell("max_request_sentences")
                                       : std::string("max_request_sentences")) +
                                "): split it");
      request.texts.reserve(value.size());
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string())
          throw ApiError(400, "\"text\"[" + std::to_string(i) + "] must be a string, got " +
                                  std::string(value[i].type_name()));
        request.texts.push_back(value[i].get<std::string>());
      }
      has_text = true;
    } else if (key == "beam_size") {
      request.beam_size = integer_field(value, key, 1, limits.max_beam_size);
    } else if (key == "n_best") {
      request.n_best = integer_field(value, key, 1, limits.max_beam_size);
    } else if (key == "alpha") {
      // The search's early stop holds for alpha >= 0 only (beam_search.h).
      request.alpha = number_field(value, key, 0, 10);
    } else if (key == "patience") {
      request.patience = number_field(value, key, 0, 100);  // 0: T2T's stopping test alone
    } else if (key == "no_repeat_ngram_size") {
      request.no_repeat_ngram_size = integer_field(value, key, 0, 100);
    } else if (key == "repetition_penalty") {
      request.repetition_penalty = number_field(value, key, 0, 100);
    } else if (key == "alignment") {
      if (!value.is_boolean())
        throw ApiError(400, "\"alignment\" must be true or false, got " +
                                std::string(value.type_name()));
      request.alignment = value.get<bool>();
    } else if (key == "alignment_threshold") {
      request.alignment_threshold = number_field(value, key, 0, 1);
    } else if (key == "prefix") {
      prefixes = string_array(value, key);
    } else if (key == "constraints") {
      if (!value.is_array())
        throw ApiError(400, "\"constraints\" must be an array with one array of terms per text, "
                            "got " + std::string(value.type_name()));
      constraints.emplace();
      for (size_t i = 0; i < value.size(); ++i)
        constraints->push_back(string_array(value[i], "constraints[" + std::to_string(i) + "]"));
    } else if (key == "glossary") {
      if (!value.is_array())
        throw ApiError(400, "\"glossary\" must be an array of [source term, target term] pairs, "
                            "got " + std::string(value.type_name()));
      for (size_t i = 0; i < value.size(); ++i) {
        const auto pair = string_array(value[i], "glossary[" + std::to_string(i) + "]");
        if (pair.size() != 2)
          throw ApiError(400, "\"glossary\"[" + std::to_string(i) + "] must be a pair [source "
                              "term, target term], got " + std::to_string(pair.size()) +
                              " strings");
        request.glossary.push_back({pair[0], pair[1]});
      }
    } else {
      throw ApiError(400, "unknown field \"" + key + "\"; the fields are text, beam_size, alpha, "
                          "n_best, patience, no_repeat_ngram_size, repetition_penalty, prefix, "
                          "constraints, glossary, alignment, alignment_threshold");
    }
  }
  if (!has_text)
    throw ApiError(400, "the field \"text\" is missing: give {\"text\": [\"a sentence\", ...]}");
  auto parallel = [&](const char* name, size_t size) {
    if (size != request.texts.size())
      throw ApiError(400, "\"" + std::string(name) + "\" has " + std::to_string(size) +
                              " entries but \"text\" has " + std::to_string(request.texts.size()) +
                              ": give one per text (empty for none)");
  };
  if (prefixes || constraints) {
    request.guides.resize(request.texts.size());
    if (prefixes) {
      parallel("prefix", prefixes->size());
      for (size_t i = 0; i < prefixes->size(); ++i) request.guides[i].prefix = (*prefixes)[i];
    }
    if (constraints) {
      parallel("constraints", constraints->size());
      for (size_t i = 0; i < constraints->size(); ++i)
        request.guides[i].constraints = (*constraints)[i];
    }
  }
  return request;
}

ApiError request_error(const OptionError& e) {
  return ApiError(400, e.render([](const std::string& field) { return "\"" + field + "\""; }));
}

SearchOptions request_search(const TranslateRequest& request, const SearchOptions& server) {
  SearchRequest search;
  search.beam_size = request.beam_size;
  search.alpha = request.alpha;
  search.n_best = request.n_best;
  search.patience = request.patience;
  search.no_repeat_ngram_size = request.no_repeat_ngram_size;
  search.repetition_penalty = request.repetition_penalty;
  search.alignment = request.alignment;
  search.alignment_threshold = request.alignment_threshold;
  try {
    return apply_search_request(server, search);
  } catch (const OptionError& e) {
    throw request_error(e);
  }
}

std::string translate_response(const std::vector<Translation>& translations, int64_t n_best,
                               int64_t model_step) {
  json texts = json::array(), scores = json::array(), alignments = json::array(),
       terms = json::array(), met = json::array();
  bool aligned = false, constrained = false;
  for (const Translation& t : translations) {
    aligned = aligned || !t.alignments.empty();
    constrained = constrained || !t.constraints.empty();
  }
  for (const Translation& t : translations) {
    json hyp_alignments = json::array(), hyp_met = json::array();
    for (const auto& a : t.alignments) hyp_alignments.push_back(alignment_json(a));
    for (const auto& m : t.constraints_met) hyp_met.push_back(met_json(m));
    if (n_best <= 1) {
      texts.push_back(t.texts.empty() ? "" : t.texts[0]);
      scores.push_back(t.scores.empty() ? 0.0 : t.scores[0]);
      // An empty text has no hypothesis to align: nothing to show.
      alignments.push_back(hyp_alignments.empty() ? json::object() : hyp_alignments[0]);
      met.push_back(hyp_met.empty() ? json::array() : hyp_met[0]);
    } else {
      texts.push_back(t.texts);
      scores.push_back(t.scores);
      alignments.push_back(std::move(hyp_alignments));
      met.push_back(std::move(hyp_met));
    }
    terms.push_back(t.constraints);
  }
  nlohmann::ordered_json out;  // in the order the API documents
  out["translations"] = std::move(texts);
  out["scores"] = std::move(scores);
  if (aligned) out["alignments"] = std::move(alignments);
  if (constrained) {
    out["constraints"] = std::move(terms);
    out["constraints_met"] = std::move(met);
  }
  out["model_step"] = model_step;
  // A model may produce bytes that are not UTF-8 (a byte-level vocabulary
  // cut mid-character): replace them rather than fail the request.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string error_body(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace t2t
