#include "t2t/metrics/bleu_tokenizers.h"

#include "t2t/core/error.h"
#include "t2t/metrics/regex_passes.h"
#include "t2t/text/unicode.h"
#include "t2t/text/utf8.h"

namespace t2t::bleu_tok {

namespace {

using regex_pass::is_ascii_digit;
using regex_pass::pad_each;
using regex_pass::Spacing;
using regex_pass::sub_pair;

// The rules sacreBLEU's 13a and zh tokenizers share (its TokenizerRegexp).
std::u32string regexp_rules(const std::u32string& line) {
  auto not_digit = [](char32_t c) { return !is_ascii_digit(c); };
  std::u32string s = pad_each(line, regex_pass::is_mteval_symbol);
  s = sub_pair(s, not_digit, regex_pass::is_period_or_comma, Spacing::kAfterEach);
  s = sub_pair(s, regex_pass::is_period_or_comma, not_digit, Spacing::kBeforeEach);
  s = sub_pair(s, is_ascii_digit, [](char32_t c) { return c == U'-'; }, Spacing::kAfterEach);
  return s;
}

std::u32string tokenize_13a(std::u32string line) {
  using regex_pass::replace_literal;
  line = replace_literal(line, U"<skipped>", U"");
  line = replace_literal(line, U"-\n", U"");
  line = replace_literal(line, U"\n", U" ");
  // In this order, so "&amp;lt;" becomes "<" as it does in sacreBLEU.
  line = replace_literal(line, U"&quot;", U"\"");
  line = replace_literal(line, U"&amp;", U"&");
  line = replace_literal(line, U"&lt;", U"<");
  line = replace_literal(line, U"&gt;", U">");
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

std::string sacrebleu_tokenizer_list() {
  const auto& names = sacrebleu_tokenizer_names();
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

const std::vector<std::string>& sacrebleu_tokenizer_names() {
  static const std::vector<std::string> names{"13a", "intl", "zh", "char", "none"};
  return names;
}

Tokens sacrebleu_tokens(const std::u32string& line, const std::string& name, bool lowercase) {
  const std::u32string segment(python_rstrip(lowercase ? unicode::lower(line) : line));
  if (name == "13a") return split_whitespace(tokenize_13a(segment));
  if (name == "intl") return split_whitespace(tokenize_intl(segment));
  if (name == "zh") return split_whitespace(tokenize_zh(segment));
  if (name == "none") return split_whitespace(segment);
  if (name == "char") {
    // sacreBLEU spaces out every character, so each one but whitespace is a token.
    Tokens tokens;
    for (char32_t c : segment)
      if (!is_python_space(c)) tokens.emplace_back(1, c);
    return tokens;
  }
  throw Error("unknown BLEU tokenizer '" + name + "': use " + sacrebleu_tokenizer_list());
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
