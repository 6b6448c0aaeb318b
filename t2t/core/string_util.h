// Small string helpers (no LibTorch).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace t2t {

std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
// The lines of `text`, views without their '\n': a last line without one
// counts, and an empty text has no lines.
std::vector<std::string_view> split_lines(std::string_view text);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string to_lower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// T2T's registry key rule (tensor2tensor/utils/misc_utils.py):
// "TranslateEnzhWmt32k" -> "translate_enzh_wmt32k".
std::string camelcase_to_snakecase(std::string_view name);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

// Up to `max_results` of `candidates` that look like `name` (small edit
// distance, or one contains the other), closest first.
std::vector<std::string> close_matches(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       size_t max_results = 3);

}  // namespace t2t
