// The Unicode facts t2t's tokenizers need: code point classes and Python's
// str.lower(). Each class is generated (gen_unicode_tables.py, into
// unicode_tables.cc) from the source its Python tokenizer uses, so token
// boundaries, subword ids and BLEU scores match theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace t2t::unicode {

// A code point's classes, one bit each; a code point may be in several.
enum Class : uint16_t {
  kUcdAlnum = 1 << 0,          // unicodedata L*, N*: T2T's text tokenizer
  kRegexPunct = 1 << 1,        // regex \p{P}: sacreBLEU intl
  kRegexSymbol = 1 << 2,       // regex \p{S}: sacreBLEU intl
  kRegexNumber = 1 << 3,       // regex \p{N}: sacreBLEU intl
  kUcdPunct = 1 << 4,          // unicodedata P*: T2T's bleu_hook
  kUcdSymbol = 1 << 5,         // unicodedata S*: T2T's bleu_hook
  kUcdDecimal = 1 << 6,        // unicodedata Nd, re's \d: T2T's bleu_hook
  kPyCasedStop = 1 << 7,       // str.lower()'s final sigma: cased, not case-ignorable
  kPyCaseIgnorable = 1 << 8,   // str.lower()'s final sigma: case-ignorable
  kSacrebleuChinese = 1 << 9,  // what sacreBLEU's zh tokenizer pads with spaces
};

// True when `c` is in `cls`.
bool in_class(char32_t c, Class cls);

// Python's str.lower().
std::u32string lower(const std::u32string& s);

// Inclusive; `classes` is a set of Class bits.
struct CodepointRange {
  char32_t lo;
  char32_t hi;
  uint16_t classes;
};
// Sorted, disjoint, each with a non-empty class set; code points outside
// them are in no class.
extern const CodepointRange kCodepointRanges[];
extern const size_t kNumCodepointRanges;

// `first`, `first + step`, ... `last` lower to `first_lower`,
// `first_lower + step`, ...: one shift for the whole run.
struct LowerRun {
  char32_t first, last;
  int step;
  char32_t first_lower;
};
// A code point whose lowercase is two code points (U+0130 -> "i\u0307").
struct LowerPair {
  char32_t from, to1, to2;
};
// Sorted by `first`; code points in no run nor pair lower to themselves.
extern const LowerRun kLowerRuns[];
extern const size_t kNumLowerRuns;
extern const LowerPair kLowerPairs[];
extern const size_t kNumLowerPairs;

}  // namespace t2t::unicode
