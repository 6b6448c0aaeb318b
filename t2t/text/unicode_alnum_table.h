// The code points T2T's tokenizer counts as alphanumeric: Unicode general
// category L* (letters) or N* (numbers). The table is generated from Python's
// unicodedata by gen_unicode_alnum_table.py, because T2T derives the very same
// set from whatever Python runs it; matching that Python's Unicode version
// keeps token boundaries, and therefore subword ids, identical.
#pragma once

#include <cstddef>

namespace t2t {

struct CodepointRange {
  char32_t lo;  // inclusive
  char32_t hi;  // inclusive
};

// Sorted, disjoint, non-adjacent ranges.
extern const CodepointRange kAlnumRanges[];
extern const size_t kNumAlnumRanges;
// The Unicode version of the unicodedata the table came from, e.g. "14.0.0".
extern const char kAlnumUnicodeVersion[];

}  // namespace t2t
