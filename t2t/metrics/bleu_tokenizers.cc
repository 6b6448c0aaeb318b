#include "t2t/metrics/bleu_tokenizers.h"

#include <algorithm>
#include <array>

#include "t2t/core/error.h"
#include "t2t/metrics/unicode_tables.h"
#include "t2t/text/tokenizer.h"

namespace t2t::bleu_tok {

namespace {

bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

// How a two-character match (a, b) is rewritten.
enum class Spacing {
  kAfterEach,    // "\1 \2 "
  kBeforeEach,  // " \1 \2"
};

// re.sub of a two-character pattern `(A)(B)`: scans left to right and
// resumes after each match, so a character consumed as B is never A.
template <typename First, typename Second>
std::u32string sub_pair(const std::u32string& s, First first, Second second, Spacing spacing) {
  std::u32string out;
  out.reserve(s.size() + s.size() / 4);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      if (spacing == Spacing::kAfterEach) {
        out += s[i];
        out += U' ';
        out += s[i + 1];
        out += U' ';
      } else {
        out += U' ';
        out += s[i];
        out += U' ';
        out += s[i + 1];
      }
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// re.sub of `(A)` by " \1 ".
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

void replace_all(std::u32string& s, const std::u32string& from, const std::u32string& to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::u32string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

// mteval's ASCII punctuation and symbols, except the apostrophe, comma,
// hyphen and period that the following rules treat by context.
bool is_13a_symbol(char32_t c) {
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == U'/';
}

// The rules sacreBLEU's 13a and zh tokenizers share (its TokenizerRegexp).
std::u32string regexp_rules(const std::u32string& line) {
  auto not_digit = [](char32_t c) { return !is_ascii_digit(c); };
  auto period_or_comma = [](char32_t c) { return c == U'.' || c == U','; };
  std::u32string s = pad_each(line, is_13a_symbol);
  s = sub_pair(s, not_digit, period_or_comma, Spacing::kAfterEach);
  s = sub_pair(s, period_or_comma, not_digit, Spacing::kBeforeEach);
  s = sub_pair(s, is_ascii_digit, [](char32_t c) { return c == U'-'; }, Spacing::kAfterEach);
  return s;
}

std::u32string tokenize_13a(std::u32string line) {
  replace_all(line, U"<skipped>", U"");
  replace_all(line, U"-\n", U"");
  replace_all(line, U"\n", U" ");
  // In this order, so "&amp;lt;" becomes "<" as it does in sacreBLEU.
  replace_all(line, U"&quot;", U"\"");
  replace_all(line, U"&amp;", U"&");
  replace_all(line, U"&lt;", U"<");
  replace_all(line, U"&gt;", U">");
  // The padding lets a sentence-final period split off a number ("in 2019.").
  return regexp_rules(U" " + line + U" ");
}

std::u32string tokenize_intl(const std::u32string& line) {
  using unicode::kRegexNumber;
  using unicode::kRegexPunct;
  auto punct = [](char32_t c) { return kRegexPunct.contains(c); };
  auto not_number = [](char32_t c) { return !kRegexNumber.contains(c); };
  std::u32string s = sub_pair(line, not_number, punct, Spacing::kAfterEach);
  s = sub_pair(s, punct, not_number, Spacing::kBeforeEach);
  return pad_each(s, [](char32_t c) { return unicode::kRegexSymbol.contains(c); });
}

std::u32string tokenize_zh(const std::u32string& line) {
  // No <skipped>/entity handling and no padding here, unlike 13a.
  return regexp_rules(pad_each(std::u32string(python_strip(line)), is_sacrebleu_chinese_char));
}

}  // namespace

Tokens split_whitespace(const std::u32string& s) {
  Tokens tokens;
  for (std::u32string_view field : python_split(s)) tokens.emplace_back(field);
  return tokens;
}

bool is_sacrebleu_chinese_char(char32_t c) {
  // sacreBLEU's table compares one-character strings against its bounds.
  // Two bounds were written as "\u20000"/"\u2a6d6" and "\u2f800"/"\u2fa1d",
  // which Python reads as a 4-digit escape plus a digit or letter, so what
  // it really covers is U+2001..U+2A6D (general punctuation, currency signs,
  // arrows, math, ...) and U+2F81..U+2FA1, and never CJK Extension B. We
  // keep its effective ranges, since matching its scores is the point.
  static constexpr std::array<unicode::CodepointRange, 22> kRanges{{
      {0x2001, 0x2A6D}, {0x2600, 0x26FF}, {0x2700, 0x27BF},  // the first swallows these two
      {0x2E80, 0x2EFF}, {0x2F00, 0x2FDF}, {0x2F81, 0x2FA1}, {0x2FF0, 0x2FFF},
      {0x3000, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31BF}, {0x31C0, 0x31EF},
      {0x3200, 0x32FF}, {0x3300, 0x33FF}, {0x3400, 0x4DB5}, {0x4E00, 0x9FA5},
      {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
      {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF},
  }};
  if (c < 0x2001 || c > 0xFFEF) return false;
  return std::any_of(kRanges.begin(), kRanges.end(),
                     [c](const unicode::CodepointRange& r) { return c >= r.first && c <= r.last; });
}

const std::vector<std::string>& sacrebleu_tokenizer_names() {
  static const std::vector<std::string> names{"13a", "intl", "zh", "none"};
  return names;
}

Tokens sacrebleu_tokens(const std::u32string& line, const std::string& name, bool lowercase) {
  const std::u32string segment(python_rstrip(lowercase ? unicode::lower(line) : line));
  if (name == "13a") return split_whitespace(tokenize_13a(segment));
  if (name == "intl") return split_whitespace(tokenize_intl(segment));
  if (name == "zh") return split_whitespace(tokenize_zh(segment));
  if (name == "none") return split_whitespace(segment);
  throw Error("unknown BLEU tokenizer '" + name + "': use 13a, intl, zh or none");
}

Tokens t2t_tokens(const std::u32string& line, bool lowercase) {
  using unicode::kUcdDecimal;
  using unicode::kUcdPunct;
  const std::u32string segment = lowercase ? unicode::lower(line) : line;
  auto punct = [](char32_t c) { return kUcdPunct.contains(c); };
  auto not_digit = [](char32_t c) { return !kUcdDecimal.contains(c); };
  std::u32string s = sub_pair(segment, not_digit, punct, Spacing::kAfterEach);
  s = sub_pair(s, punct, not_digit, Spacing::kBeforeEach);
  s = pad_each(s, [](char32_t c) { return unicode::kUcdSymbol.contains(c); });
  return split_whitespace(s);
}

}  // namespace t2t::bleu_tok
