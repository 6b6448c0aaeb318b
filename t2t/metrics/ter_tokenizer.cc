#include "t2t/metrics/ter_tokenizer.h"

#include "t2t/metrics/regex_passes.h"
#include "t2t/text/unicode.h"
#include "t2t/text/utf8.h"

namespace t2t::ter_tok {

namespace {

using regex_pass::is_ascii_digit;
using regex_pass::is_period_or_comma;
using regex_pass::pad_each;
using regex_pass::replace_literal;
using regex_pass::Spacing;
using regex_pass::sub_pair;

std::u32string normalize_western(const std::u32string& line) {
  std::u32string s = replace_literal(line, U"\n-", U"");
  s = replace_literal(s, U"\n", U" ");
  // In this order, so "&amp;lt;" ends as "<".
  s = replace_literal(s, U"&quot;", U"\"");
  s = replace_literal(s, U"&amp;", U"&");
  s = replace_literal(s, U"&lt;", U"<");
  s = replace_literal(s, U"&gt;", U">");
  s = pad_each(U" " + s + U" ", regex_pass::is_mteval_symbol);
  s = replace_literal(s, U"'s ", U" 's ");
  // Its "'s$" rule never fires: the padding above leaves a space at the end.
  auto not_digit = [](char32_t c) { return !is_ascii_digit(c); };
  s = sub_pair(s, not_digit, is_period_or_comma, Spacing::kAfterEach);
  s = sub_pair(s, is_period_or_comma, not_digit, Spacing::kBeforeEach);
  return sub_pair(s, is_ascii_digit, [](char32_t c) { return c == U'-'; }, Spacing::kAfterEach);
}

bool is_asian_punct(char32_t c) {
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) ||
         (c >= 0x3014 && c <= 0x301F) || (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}

bool is_full_width_punct(char32_t c) {
  switch (c) {
    case 0xFF0E: case 0xFF0C: case 0xFF1F: case 0xFF1A: case 0xFF1B:
    case 0xFF01: case 0xFF02: case 0xFF08: case 0xFF09:
      return true;
    default:
      return false;
  }
}

// The CJK blocks Tercom splits into single characters. Its overlapping
// passes pad some characters twice, which only adds spaces, so one pass
// over their union gives the same words.
bool is_split_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x31C0 && c <= 0x31EF) || (c >= 0x2E80 && c <= 0x2EFF) ||
         (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22);
}

// Its Hiragana and Katakana passes are left out: anchored with ^ and no
// MULTILINE, they can only match a whole sentence from its start (and the
// Western padding puts a space there first), and then only add spaces at
// its edges, which changes no word.
std::u32string normalize_asian(const std::u32string& s) {
  return pad_each(s, [](char32_t c) {
    return is_split_cjk(c) || is_asian_punct(c) || is_full_width_punct(c);
  });
}

bool is_tercom_punct(char32_t c) {
  switch (c) {
    case U'.': case U',': case U'?': case U':': case U';': case U'!': case U'"': case U'(':
    case U')':
      return true;
    default:
      return false;
  }
}

template <typename Pred>
std::u32string remove_each(const std::u32string& s, Pred pred) {
  std::u32string out;
  out.reserve(s.size());
  for (char32_t c : s)
    if (!pred(c)) out += c;
  return out;
}

}  // namespace

std::vector<std::u32string> tercom_words(std::u32string_view line, const TerOptions& options) {
  std::u32string s(line);
  if (!options.case_sensitive) s = unicode::lower(s);
  if (options.normalized) {
    s = normalize_western(s);
    if (options.asian_support) s = normalize_asian(s);
  }
  if (options.no_punct) {
    s = remove_each(s, is_tercom_punct);
    if (options.asian_support)
      s = remove_each(s, [](char32_t c) { return is_asian_punct(c) || is_full_width_punct(c); });
  }
  std::vector<std::u32string> words;
  for (std::u32string_view w : python_split(s)) words.emplace_back(w);
  return words;
}

}  // namespace t2t::ter_tok

namespace t2t {

std::string tercom_tokenize(const std::string& line, const TerOptions& options) {
  const std::u32string text = utf8_to_u32(utf8_replace_invalid(line));
  std::string out;
  for (const auto& word : ter_tok::tercom_words(python_rstrip(text), options)) {
    if (!out.empty()) out += ' ';
    out += u32_to_utf8(word);
  }
  return out;
}

}  // namespace t2t
