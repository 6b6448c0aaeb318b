#include <algorithm>
#include <cstdint>

#include "t2t/metrics/unicode_tables.h"

namespace t2t::unicode {

bool CodepointSet::contains(char32_t c) const {
  const CodepointRange* end = ranges + size;
  const CodepointRange* it = std::upper_bound(
      ranges, end, c, [](char32_t v, const CodepointRange& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

namespace {

// The single codepoint `c` lowers to (itself when it has no lowercase).
char32_t lower_single(char32_t c) {
  const LowerRun* end = kLower.runs + kLower.num_runs;
  const LowerRun* it = std::upper_bound(
      kLower.runs, end, c, [](char32_t v, const LowerRun& r) { return v < r.first; });
  if (it == kLower.runs) return c;
  const LowerRun& r = *(it - 1);
  if (c > r.last || (c - r.first) % r.step != 0) return c;
  return static_cast<char32_t>(static_cast<int64_t>(c) + r.delta);
}

// Python's rule for U+03A3: final form after a cased letter (skipping
// case-ignorable characters) unless a cased letter follows in the same way.
bool is_final_sigma(const std::u32string& s, size_t i) {
  size_t j = i;
  while (j > 0 && kPyCaseIgnorable.contains(s[j - 1])) --j;
  if (j == 0 || !kPyCasedStop.contains(s[j - 1])) return false;
  size_t k = i + 1;
  while (k < s.size() && kPyCaseIgnorable.contains(s[k])) ++k;
  return k == s.size() || !kPyCasedStop.contains(s[k]);
}

}  // namespace

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
    const LowerPair* pair = std::find_if(kLower.pairs, kLower.pairs + kLower.num_pairs,
                                         [c](const LowerPair& p) { return p.from == c; });
    if (pair != kLower.pairs + kLower.num_pairs) {
      out.push_back(pair->to1);
      out.push_back(pair->to2);
    } else {
      out.push_back(lower_single(c));
    }
  }
  return out;
}

}  // namespace t2t::unicode
