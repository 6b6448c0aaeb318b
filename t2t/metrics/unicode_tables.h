// Codepoint classes and lowercasing for the BLEU tokenizers, generated from
// Python by gen_unicode_tables.py so that t2t splits text exactly where
// sacreBLEU and T2T's bleu_hook (both Python) do.
#pragma once

#include <cstddef>
#include <string>

namespace t2t::unicode {

struct CodepointRange {
  char32_t first, last;
};

// A sorted list of disjoint inclusive ranges.
struct CodepointSet {
  const CodepointRange* ranges;
  size_t size;
  bool contains(char32_t c) const;
};

// `first`, `first + step`, ... `last` lower to themselves plus `delta`.
struct LowerRun {
  char32_t first, last;
  int step;
  int delta;
};
// A codepoint whose lowercase is two codepoints (U+0130 -> "i\u0307").
struct LowerPair {
  char32_t from, to1, to2;
};
struct LowerTable {
  const LowerRun* runs;
  size_t num_runs;
  const LowerPair* pairs;
  size_t num_pairs;
};

// As the `regex` module's \p{P}, \p{S}, \p{N} (sacreBLEU's intl tokenizer).
extern const CodepointSet kRegexPunct, kRegexSymbol, kRegexNumber;
// As unicodedata categories P*, S*, Nd (T2T's bleu_hook, re's \d).
extern const CodepointSet kUcdPunct, kUcdSymbol, kUcdDecimal;
// For str.lower()'s final sigma: cased letters that are not case-ignorable,
// and case-ignorable characters.
extern const CodepointSet kPyCasedStop, kPyCaseIgnorable;
extern const LowerTable kLower;

// Python's str.lower().
std::u32string lower(const std::u32string& s);

}  // namespace t2t::unicode
