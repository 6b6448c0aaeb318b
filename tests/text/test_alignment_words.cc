// alignment_words: the words alignments and glossaries are expressed over,
// for spaced scripts, Chinese and Japanese, mixtures, and broken UTF-8.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "t2t/text/alignment_words.h"

namespace {

using t2t::alignment_words;
using Strings = std::vector<std::string>;

Strings words_of(std::string_view text) {
  Strings out;
  for (std::string_view w : t2t::word_texts(text, alignment_words(text))) out.emplace_back(w);
  return out;
}

}  // namespace

TEST_CASE("English splits into letter runs and punctuation runs", "[alignment_words]") {
  CHECK(words_of("Hello, world!") == Strings{"Hello", ",", "world", "!"});
  CHECK(words_of("don't stop...") == Strings{"don", "'", "t", "stop", "..."});
  CHECK(words_of("  3.5\tkm ") == Strings{"3", ".", "5", "km"});
  CHECK(words_of("café—naïve") == Strings{"café", "—", "naïve"});
  const auto spans = alignment_words("Hello, world!");
  REQUIRE(spans.size() == 4);
  CHECK(spans[0] == t2t::WordSpan{0, 5});
  CHECK(spans[1] == t2t::WordSpan{5, 6});
  CHECK(spans[2] == t2t::WordSpan{7, 12});
  CHECK(spans[3] == t2t::WordSpan{12, 13});
}

TEST_CASE("each CJK ideograph, kana or Hangul syllable is a word alone", "[alignment_words]") {
  CHECK(words_of("我爱你。") == Strings{"我", "爱", "你", "。"});
  // CJK punctuation runs together like any other.
  CHECK(words_of("好！！") == Strings{"好", "！！"});
  CHECK(words_of("ひらがなカタカナ") ==
        Strings{"ひ", "ら", "が", "な", "カ", "タ", "カ", "ナ"});
  CHECK(words_of("한국어 문장") == Strings{"한", "국", "어", "문", "장"});
  // Extension B and a compatibility ideograph.
  CHECK(words_of("\xF0\xA0\x80\x80\xEF\xA4\x80") == Strings{"\xF0\xA0\x80\x80", "\xEF\xA4\x80"});
  // The katakana middle dot is punctuation, not a word of its own kind.
  CHECK(words_of("コ・ヒ") == Strings{"コ", "・", "ヒ"});
  CHECK(t2t::is_cjk_word_char(U'中'));
  CHECK_FALSE(t2t::is_cjk_word_char(U'。'));
  CHECK_FALSE(t2t::is_cjk_word_char(U'a'));
}

TEST_CASE("mixed scripts split where the kind of character changes", "[alignment_words]") {
  CHECK(words_of("iPhone 15手机") == Strings{"iPhone", "15", "手", "机"});
  CHECK(words_of("用Python写代码.") == Strings{"用", "Python", "写", "代", "码", "."});
  CHECK(words_of("GPT-4o很快") == Strings{"GPT", "-", "4o", "很", "快"});
  // Non-ASCII whitespace separates too (ideographic space, no-break space).
  CHECK(words_of("北京\u3000上海\u00A0ok") == Strings{"北", "京", "上", "海", "ok"});
}

TEST_CASE("empty and blank text has no words", "[alignment_words]") {
  CHECK(alignment_words("").empty());
  CHECK(alignment_words(" \t\r\n ").empty());
  CHECK(alignment_words("\u3000").empty());
}

TEST_CASE("invalid UTF-8 bytes count as punctuation and never throw", "[alignment_words]") {
  // A lone continuation byte joins the punctuation run beside it.
  CHECK(words_of("ab\x80!cd") == Strings{"ab", "\x80!", "cd"});
  // A truncated sequence at the end of the text.
  CHECK(words_of("x \xE4\xB8") == Strings{"x", "\xE4\xB8"});
  CHECK(words_of("\xFF\xFE") == Strings{"\xFF\xFE"});
  // A broken lead byte before an ideograph leaves the ideograph whole.
  CHECK(words_of("\xC3中") == Strings{"\xC3", "中"});
}
