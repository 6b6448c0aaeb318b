#include "t2t/text/alignment_words.h"

#include "t2t/text/tokenizer.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

struct Range {
  char32_t first, last;
};

// Ideograph blocks: every code point in them is a word alone, assigned in
// our Unicode tables or not, so ideographs added after those tables (CJK
// Extension H, I) still split.
constexpr Range kIdeographs[] = {
    {0x3400, 0x4DBF},    // Extension A
    {0x4E00, 0x9FFF},    // CJK Unified Ideographs
    {0xF900, 0xFAFF},    // Compatibility Ideographs
    {0x20000, 0x2A6DF},  // Extension B
    {0x2A700, 0x2EE5F},  // Extensions C, D, E, F, I
    {0x2F800, 0x2FA1F},  // Compatibility Ideographs Supplement
    {0x30000, 0x323AF},  // Extensions G, H
};

// Syllabaries: only their letters are words alone; their punctuation
// (U+30FB KATAKANA MIDDLE DOT) and combining marks stay punctuation.
constexpr Range kSyllabaries[] = {
    {0x3040, 0x309F},    // Hiragana
    {0x30A0, 0x30FF},    // Katakana
    {0x31F0, 0x31FF},    // Katakana Phonetic Extensions
    {0xAC00, 0xD7AF},    // Hangul Syllables
    {0xFF66, 0xFF9F},    // Halfwidth Katakana
    {0x1B000, 0x1B16F},  // Kana Supplement, Kana Extended-A, Small Kana Extension
};

template <size_t N>
bool in_ranges(const Range (&ranges)[N], char32_t c) {
  for (const Range& r : ranges)
    if (c >= r.first && c <= r.last) return true;
  return false;
}

enum class CharClass { kSpace, kAlnum, kCjk, kOther };

CharClass classify(const Utf8Char& unit) {
  if (!unit.ok) return CharClass::kOther;
  const char32_t c = unit.cp;
  if (is_python_space(c)) return CharClass::kSpace;
  // ASCII without the table lookup: most text is mostly ASCII.
  if (c < 0x80) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    return alnum ? CharClass::kAlnum : CharClass::kOther;
  }
  if (is_cjk_word_char(c)) return CharClass::kCjk;
  return tokenizer::is_alnum(c) ? CharClass::kAlnum : CharClass::kOther;
}

}  // namespace

bool is_cjk_word_char(char32_t c) {
  if (c < 0x3040) return false;
  return in_ranges(kIdeographs, c) || (in_ranges(kSyllabaries, c) && tokenizer::is_alnum(c));
}

std::vector<WordSpan> alignment_words(std::string_view utf8) {
  std::vector<WordSpan> words;
  CharClass open = CharClass::kSpace;  // the class of the word being extended
  size_t i = 0;
  while (i < utf8.size()) {
    const Utf8Char unit = decode_utf8_front(utf8.substr(i));
    const CharClass cls = classify(unit);
    if (cls != CharClass::kSpace) {
      // A CJK character never extends a word, nor does anything extend it.
      if (cls == open && cls != CharClass::kCjk)
        words.back().end = i + unit.len;
      else
        words.push_back({i, i + unit.len});
    }
    open = cls;
    i += unit.len;
  }
  return words;
}

std::vector<std::string_view> word_texts(std::string_view utf8,
                                         const std::vector<WordSpan>& spans) {
  std::vector<std::string_view> out;
  out.reserve(spans.size());
  for (const WordSpan& s : spans) out.push_back(utf8.substr(s.begin, s.end - s.begin));
  return out;
}

}  // namespace t2t
