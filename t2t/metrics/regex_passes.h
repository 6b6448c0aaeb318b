// The re.sub passes sacreBLEU's tokenizers are made of (13a's and zh's
// rules, Tercom's normalisation), on code points: each scans left to right
// and resumes after a match, so no character takes part in two matches of
// one pass. Internal to t2t/metrics.
#pragma once

#include <string>
#include <string_view>

namespace t2t::regex_pass {

inline bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
inline bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }

// mteval's (and Tercom's) ASCII punctuation and symbols, except the
// apostrophe, comma, hyphen and period that their context rules treat. The
// space is in the class too; padding it changes no word.
inline bool is_mteval_symbol(char32_t c) {
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == U'/';
}

// re.sub of a literal.
inline std::u32string replace_literal(const std::u32string& s, std::u32string_view from,
                                      std::u32string_view to) {
  std::u32string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::u32string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out += to;
  }
  out.append(s, pos, std::u32string::npos);
  return out;
}

// re.sub of "(A)" by " \1 ".
template <typename Pred>
std::u32string pad_each(const std::u32string& s, Pred pred) {
  std::u32string out;
  out.reserve(s.size() + s.size() / 4);
  for (char32_t c : s) {
    if (pred(c)) {
      out += U' ';
      out += c;
      out += U' ';
    } else {
      out += c;
    }
  }
  return out;
}

// How a two-character match (a, b) is rewritten.
enum class Spacing {
  kAfterEach,   // "\1 \2 "
  kBeforeEach,  // " \1 \2"
};

// re.sub of "(A)(B)": a character taken as B is never the next match's A.
template <typename First, typename Second>
std::u32string sub_pair(const std::u32string& s, First first, Second second, Spacing spacing) {
  std::u32string out;
  out.reserve(s.size() + s.size() / 4);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      if (spacing == Spacing::kBeforeEach) out += U' ';
      out += s[i];
      out += U' ';
      out += s[i + 1];
      if (spacing == Spacing::kAfterEach) out += U' ';
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace t2t::regex_pass
