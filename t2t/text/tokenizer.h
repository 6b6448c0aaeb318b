// T2T's invertible tokenizer (tensor2tensor/data_generators/tokenizer.py) and
// the token counts its vocabularies are built from.
//
// Text is split at every boundary between an alphanumeric character (Unicode
// category L* or N*) and a non-alphanumeric one. A token that is exactly one
// space is dropped unless it starts the text, since decoding puts a space
// back between any two adjacent alphanumeric tokens:
//   "Dude - that's so cool." -> "Dude" " - " "that" "'" "s" "so" "cool" "."
// Runs of Chinese characters (category Lo) form one token per run between
// punctuation; there is no word segmentation.
//
// Lengths and positions follow code points, as T2T's Python does (see
// utf8.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace t2t {

// ---- Tokenizer ------------------------------------------------------------

namespace tokenizer {

// True for code points of general category L* or N* (unicode::kUcdAlnum,
// whose generated table records the Unicode version).
bool is_alnum(char32_t c);

// Views into `text`.
std::vector<std::u32string_view> encode(std::u32string_view text);
std::vector<std::string> encode(std::string_view utf8_text);

// Joins tokens, with one space between two tokens that both start with an
// alphanumeric character. Tokens must be non-empty.
std::string decode(const std::vector<std::string>& tokens);
std::u32string decode(const std::vector<std::u32string>& tokens);

}  // namespace tokenizer

// ---- Token counts, for building vocabularies --------------------------------

// Token (UTF-8) -> number of occurrences.
using TokenCounts = std::unordered_map<std::string, int64_t>;

// Adds the tokens of one text to `counts`.
void count_tokens(std::string_view utf8_text, TokenCounts& counts);
// Token counts over many texts (lines are not stripped, as in T2T's
// SubwordTextEncoder.build_from_generator). Tokenizes on several threads.
TokenCounts count_tokens(const std::vector<std::string>& texts);

// T2T's tokenizer.corpus_token_counts: reads the files matching the glob
// `file_pattern` in sorted order. With split_on_newlines each line is
// stripped of surrounding whitespace and counted on its own; otherwise each
// file is one text. Stops after max_lines lines when max_lines > 0.
// Throws t2t::Error when nothing matches or a file cannot be read.
TokenCounts corpus_token_counts(const std::string& file_pattern, int64_t max_lines,
                                bool split_on_newlines = true);

}  // namespace t2t
