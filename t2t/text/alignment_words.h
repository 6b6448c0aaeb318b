// The words that word alignments and glossary matches are expressed over,
// in any script. Chinese and Japanese are written without spaces and a
// tokenizer's subwords are no words at all, so words here are defined by
// character classes alone: letters and digits run together, except that
// each CJK ideograph, kana or Hangul syllable is a word of its own (as
// alignment tools and BERT's tokenizer treat Chinese), and punctuation runs
// together apart from them. No LibTorch.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace t2t {

// Byte offsets [begin, end) into UTF-8 text.
struct WordSpan {
  size_t begin = 0, end = 0;
};

inline bool operator==(const WordSpan& a, const WordSpan& b) {
  return a.begin == b.begin && a.end == b.end;
}
inline bool operator!=(const WordSpan& a, const WordSpan& b) { return !(a == b); }

// True for the code points that are each a word alone: CJK Unified and
// Compatibility Ideographs (all extensions), and the letters of Hiragana,
// Katakana and Hangul syllables.
bool is_cjk_word_char(char32_t c);

// The words of `utf8`, front to back: a maximal run of alphanumeric code
// points (tokenizer::is_alnum) other than CJK ones, one CJK code point
// alone, or a maximal run of other non-whitespace code points
// (punctuation, symbols). Whitespace (Python's str.isspace()) separates
// and is never part of a word. Invalid UTF-8 never throws: each invalid
// unit counts as one punctuation code point.
//   "Hello, world!" -> "Hello" "," "world" "!"
//   "iPhone 15手机"  -> "iPhone" "15" "手" "机"
std::vector<WordSpan> alignment_words(std::string_view utf8);

// The text of each span.
std::vector<std::string_view> word_texts(std::string_view utf8, const std::vector<WordSpan>& spans);

}  // namespace t2t
