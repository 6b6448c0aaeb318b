// T2T's invertible tokenizer (tensor2tensor/data_generators/tokenizer.py) and
// the token counts its vocabularies are built from.
//
// Text is split at every boundary between an alphanumeric character (L* or
// N*) and another. A single-space token is dropped unless it starts the
// text; decoding puts it back between adjacent alphanumeric tokens:
//   "Dude - that's so cool." -> "Dude" " - " "that" "'" "s" "so" "cool" "."
// Lengths and positions are in code points, as in T2T's Python.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace t2t {

namespace tokenizer {

// True for code points of general category L* or N*.
bool is_alnum(char32_t c);

// Views into `text`.
std::vector<std::u32string_view> encode(std::u32string_view text);
std::vector<std::string> encode(std::string_view utf8_text);

// Joins tokens, with one space between two tokens that both start with an
// alphanumeric character. Tokens must be non-empty.
std::string decode(const std::vector<std::string>& tokens);
std::u32string decode(const std::vector<std::u32string>& tokens);

}  // namespace tokenizer

// Token (UTF-8) -> number of occurrences.
using TokenCounts = std::unordered_map<std::string, int64_t>;

// Adds the tokens of one text to `counts`.
void count_tokens(std::string_view utf8_text, TokenCounts& counts);
// Token counts over many texts (lines are not stripped, as in T2T's
// SubwordTextEncoder.build_from_generator). Tokenizes on several threads.
TokenCounts count_tokens(const std::vector<std::string>& texts);

// T2T's tokenizer.corpus_token_counts over the files matching the glob, in
// sorted order: each line stripped (split_on_newlines) or each file one
// text; at most max_lines lines when > 0. Throws t2t::Error when nothing
// matches or a file cannot be read.
TokenCounts corpus_token_counts(const std::string& file_pattern, int64_t max_lines,
                                bool split_on_newlines = true);

}  // namespace t2t
