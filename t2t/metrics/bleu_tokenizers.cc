#include "t2t/metrics/bleu_tokenizers.h"

#include "t2t/core/error.h"
#include "t2t/text/unicode.h"
#include "t2t/text/utf8.h"

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
  using unicode::in_class;
  auto punct = [](char32_t c) { return in_class(c, unicode::kRegexPunct); };
  auto not_number = [](char32_t c) { return !in_class(c, unicode::kRegexNumber); };
  std::u32string s = sub_pair(line, not_number, punct, Spacing::kAfterEach);
  s = sub_pair(s, punct, not_number, Spacing::kBeforeEach);
  return pad_each(s, [](char32_t c) { return in_class(c, unicode::kRegexSymbol); });
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
  // The class is read off sacreBLEU's own test, so it holds what sacreBLEU's
  // table really covers. Two bounds there were written as "\u20000"/"\u2a6d6"
  // and "\u2f800"/"\u2fa1d", which Python reads as a 4-digit escape plus a
  // digit or letter, so it covers U+2001..U+2A6D (general punctuation,
  // currency signs, arrows, math, ...) and U+2F81..U+2FA1, and never CJK
  // Extension B. We keep its effective ranges, since matching its scores is
  // the point.
  return unicode::in_class(c, unicode::kSacrebleuChinese);
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
  using unicode::in_class;
  const std::u32string segment = lowercase ? unicode::lower(line) : line;
  auto punct = [](char32_t c) { return in_class(c, unicode::kUcdPunct); };
  auto not_digit = [](char32_t c) { return !in_class(c, unicode::kUcdDecimal); };
  std::u32string s = sub_pair(segment, not_digit, punct, Spacing::kAfterEach);
  s = sub_pair(s, punct, not_digit, Spacing::kBeforeEach);
  s = pad_each(s, [](char32_t c) { return in_class(c, unicode::kUcdSymbol); });
  return split_whitespace(s);
}

}  // namespace t2t::bleu_tok
