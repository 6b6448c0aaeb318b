#include "t2t/text/unicode.h"

#include <algorithm>
#include <array>

namespace t2t::unicode {

namespace {

// Out of line, like the table's construction below, so that the BMP lookup
// in in_class stays a few instructions: the tokenizers call it per character.
[[gnu::noinline]] uint16_t search_classes(char32_t c) {
  const CodepointRange* begin = kCodepointRanges;
  const CodepointRange* end = kCodepointRanges + kNumCodepointRanges;
  const CodepointRange* it =
      std::upper_bound(begin, end, c, [](char32_t v, const CodepointRange& r) { return v < r.lo; });
  return it != begin && c <= (it - 1)->hi ? (it - 1)->classes : 0;
}

using BmpClasses = std::array<uint16_t, 0x10000>;

[[gnu::noinline]] BmpClasses build_bmp_classes() {
  BmpClasses classes{};
  for (size_t r = 0; r < kNumCodepointRanges; ++r) {
    const CodepointRange& range = kCodepointRanges[r];
    if (range.lo > 0xFFFF) break;
    const char32_t hi = std::min<char32_t>(range.hi, 0xFFFF);
    for (char32_t c = range.lo; c <= hi; ++c) classes[c] = range.classes;
  }
  return classes;
}

// The Basic Multilingual Plane, where nearly all text lives, as a direct
// table (128 KiB) so that a lookup there is one load; rarer planes fall back
// to a binary search of the ranges.
const BmpClasses& bmp_classes() {
  static const BmpClasses table = build_bmp_classes();
  return table;
}

// The single code point `c` lowers to (itself when it has no lowercase).
char32_t lower_single(char32_t c) {
  const LowerRun* begin = kLowerRuns;
  const LowerRun* end = kLowerRuns + kNumLowerRuns;
  const LowerRun* it =
      std::upper_bound(begin, end, c, [](char32_t v, const LowerRun& r) { return v < r.first; });
  if (it == begin) return c;
  const LowerRun& r = *(it - 1);
  if (c > r.last || (c - r.first) % r.step != 0) return c;
  return r.first_lower + (c - r.first);
}

// Python's rule for U+03A3: final form after a cased letter (skipping
// case-ignorable characters) unless a cased letter follows in the same way.
bool is_final_sigma(const std::u32string& s, size_t i) {
  size_t j = i;
  while (j > 0 && in_class(s[j - 1], kPyCaseIgnorable)) --j;
  if (j == 0 || !in_class(s[j - 1], kPyCasedStop)) return false;
  size_t k = i + 1;
  while (k < s.size() && in_class(s[k], kPyCaseIgnorable)) ++k;
  return k == s.size() || !in_class(s[k], kPyCasedStop);
}

}  // namespace

bool in_class(char32_t c, Class cls) {
  const uint16_t classes = c <= 0xFFFF ? bmp_classes()[c] : search_classes(c);
  return (classes & cls) != 0;
}

std::u32string lower(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char32_t c = s[i];
    if (c == 0x3A3) {
      out.push_back(is_final_sigma(s, i) ? 0x3C2 : 0x3C3);
      continue;
    }
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
      continue;
    }
    const LowerPair* pairs_end = kLowerPairs + kNumLowerPairs;
    const LowerPair* pair =
        std::find_if(kLowerPairs, pairs_end, [c](const LowerPair& p) { return p.from == c; });
    if (pair != pairs_end) {
      out.push_back(pair->to1);
      out.push_back(pair->to2);
    } else {
      out.push_back(lower_single(c));
    }
  }
  return out;
}

}  // namespace t2t::unicode
