// Word alignments from token attention: where each id's text lies in the
// decoded sentence (byte, token and subword encoders, EOS and padding),
// subword tokens merged into words on hand-made attention matrices, the
// hard-alignment rules, and the Pharaoh and soft alignment texts.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/text/subword_text_encoder.h"
#include "t2t/text/text_encoder.h"
#include "t2t/translate/word_alignment.h"

namespace {

using namespace t2t;
using Ids = std::vector<int64_t>;
using Spans = std::vector<WordSpan>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;
using Matrix = std::vector<std::vector<float>>;
using Strings = std::vector<std::string>;

// A hand-made subword vocabulary: "the cats!" encodes as the_ cat s_ !_,
// "我们去北京" as 我们 去 北京_.
SubwordTextEncoder small_subwords() {
  return SubwordTextEncoder::from_subtokens(
      {"<pad>_", "<EOS>_", "the_", "cat", "s_", "!_", "我们", "去", "北京_"});
}

void check_row(const std::vector<float>& row, const std::vector<double>& expected) {
  REQUIRE(row.size() == expected.size());
  for (size_t i = 0; i < row.size(); ++i) CHECK(row[i] == Approx(expected[i]).margin(1e-6));
}

}  // namespace

// ---- token_spans -------------------------------------------------------------------

TEST_CASE("token_spans places byte ids, completing characters on their last byte",
          "[word_alignment]") {
  const ByteTextEncoder bytes;
  // "hé!" then EOS: the first byte of 'é' decodes to U+FFFD, no prefix of
  // the text, so the byte that completes the character owns it.
  const Ids ids = bytes.encode("h\xC3\xA9!");
  Ids with_eos = ids;
  with_eos.push_back(kEosId);
  CHECK(alignment_text(bytes, with_eos) == "h\xC3\xA9!");
  CHECK(token_spans(bytes, with_eos) == Spans{{0, 1}, {1, 1}, {1, 3}, {3, 4}, {4, 4}});
  CHECK(token_spans(bytes, bytes.encode("中")) == Spans{{0, 0}, {0, 0}, {0, 3}});
  CHECK(token_spans(bytes, {}).empty());
  CHECK(token_spans(bytes, {kEosId}) == Spans{{0, 0}});
}

TEST_CASE("token_spans places whole tokens, their separating space included",
          "[word_alignment]") {
  const auto enc = TokenTextEncoder::from_list({"hello", "world", "!"});
  const Ids ids = {2, 3, kPadId, 4, kEosId};
  CHECK(alignment_text(enc, ids) == "hello world !");
  CHECK(token_spans(enc, ids) == Spans{{0, 5}, {5, 11}, {11, 11}, {11, 13}, {13, 13}});
}

TEST_CASE("token_spans places subwords, several words to a token and none to EOS",
          "[word_alignment]") {
  const auto enc = small_subwords();
  REQUIRE(enc.encode("the cats!") == Ids{2, 3, 4, 5});
  CHECK(token_spans(enc, {2, 3, 4, 5, kEosId}) ==
        Spans{{0, 3}, {3, 7}, {7, 8}, {8, 9}, {9, 9}});

  REQUIRE(enc.encode("我们去北京") == Ids{6, 7, 8});
  CHECK(token_spans(enc, {6, 7, 8, kEosId}) == Spans{{0, 6}, {6, 9}, {9, 15}, {15, 15}});

  // An id outside the vocabulary decodes to nothing: an empty span.
  CHECK(token_spans(enc, {2, 999, 3, 4}) == Spans{{0, 3}, {3, 3}, {3, 7}, {7, 8}});
}

// ---- align_words -------------------------------------------------------------------

TEST_CASE("align_words merges subword attention into words and drops EOS",
          "[word_alignment]") {
  const auto enc = small_subwords();
  const std::string source = "the cats!";
  const Spans source_spans = token_spans(enc, {2, 3, 4, 5, kEosId});
  // Target tokens "les" " ch" "ats" "!" EOS, as a subword encoder might cut them.
  const std::string target = "les chats!";
  const Spans target_spans = {{0, 3}, {3, 6}, {6, 9}, {9, 10}, {10, 10}};
  // Columns: the_ cat s_ !_ EOS.
  const Matrix attention = {
      {0.7f, 0.1f, 0.0f, 0.0f, 0.2f},  // les
      {0.1f, 0.5f, 0.2f, 0.0f, 0.2f},  // ch
      {0.0f, 0.2f, 0.6f, 0.0f, 0.2f},  // ats
      {0.0f, 0.0f, 0.1f, 0.5f, 0.4f},  // !
      {0.0f, 0.0f, 0.0f, 0.0f, 1.0f},  // EOS: in no word
  };

  const WordAlignment hard = align_words(source, source_spans, target, target_spans, attention, 1);
  CHECK(hard.source_words == Strings{"the", "cats", "!"});
  CHECK(hard.target_words == Strings{"les", "chats", "!"});
  REQUIRE(hard.soft.size() == 3);
  check_row(hard.soft[0], {0.875, 0.125, 0});
  // "chats" = ch + ats: sums (0.1, 0.7 + 0.8, 0) over 1.6.
  check_row(hard.soft[1], {0.0625, 0.9375, 0});
  check_row(hard.soft[2], {0, 1.0 / 6, 5.0 / 6});
  CHECK(hard.hard == Pairs{{0, 0}, {1, 1}, {2, 2}});
  CHECK(pharaoh(hard.hard) == "0-0 1-1 2-2");

  // A lower threshold adds every source word with enough of the attention.
  const WordAlignment loose =
      align_words(source, source_spans, target, target_spans, attention, 0.1);
  CHECK(loose.hard == Pairs{{0, 0}, {1, 0}, {1, 1}, {1, 2}, {2, 2}});
  CHECK(loose.soft == hard.soft);

  // Extra rows and columns (a padded batch) are ignored.
  Matrix padded = attention;
  for (auto& row : padded) row.push_back(0.9f);
  padded.push_back(std::vector<float>(6, 0.5f));
  CHECK(align_words(source, source_spans, target, target_spans, padded, 1).soft == hard.soft);
}

TEST_CASE("threshold 1 takes one source word, a lower one may take several",
          "[word_alignment]") {
  const std::string source = "ice cream";
  const Spans source_spans = {{0, 3}, {3, 9}, {9, 9}};
  const std::string target = "Eis ?";
  const Spans target_spans = {{0, 3}, {3, 5}, {5, 5}};
  const Matrix attention = {
      {0.4f, 0.4f, 0.2f},  // Eis: a tie between "ice" and "cream"
      {0.0f, 0.0f, 1.0f},  // ?: only EOS, so no source word
      {0.3f, 0.3f, 0.4f},
  };
  const auto argmax = align_words(source, source_spans, target, target_spans, attention, 1.0);
  CHECK(argmax.hard == Pairs{{0, 0}});  // the tie goes to the lower index
  check_row(argmax.soft[1], {0, 0});
  const auto loose = align_words(source, source_spans, target, target_spans, attention, 0.3);
  CHECK(loose.hard == Pairs{{0, 0}, {1, 0}});
  // A threshold met exactly counts; shares are of all the attention, EOS's
  // included (0.4 each here), while soft rows are over the words.
  CHECK(align_words(source, source_spans, target, target_spans, attention, 0.4).hard ==
        Pairs{{0, 0}, {1, 0}});
  CHECK(align_words(source, source_spans, target, target_spans, attention, 0.5).hard.empty());
  CHECK(soft_alignment_text(loose.soft) == "0.5,0.5 0,0");
  // Where the tokens in no word hold more than the best word, threshold 1
  // leaves the target word unaligned, as an aligner's NULL link.
  const Matrix mostly_eos = {{0.2f, 0.3f, 0.5f}, {0.0f, 0.6f, 0.4f}, {0, 0, 1}};
  CHECK(align_words(source, source_spans, target, target_spans, mostly_eos, 1.0).hard ==
        Pairs{{1, 1}});
}

TEST_CASE("a token spanning several words counts for each of them", "[word_alignment]") {
  // One byte-level-BPE-like target token covers "a,b": three words.
  const auto al = align_words("x y", {{0, 1}, {1, 3}}, "a,b", {{0, 3}},
                              {{0.25f, 0.75f}}, 1);
  CHECK(al.target_words == Strings{"a", ",", "b"});
  for (const auto& row : al.soft) check_row(row, {0.25, 0.75});
  CHECK(al.hard == Pairs{{1, 0}, {1, 1}, {1, 2}});
}

TEST_CASE("align_words refuses bad thresholds, short matrices and stray spans",
          "[word_alignment]") {
  const Spans spans = {{0, 1}};
  const Matrix attention = {{1.0f}};
  for (double bad : {0.0, -0.5, 1.5, std::nan("")}) {
    INFO("threshold " << bad);
    CHECK_THROWS_WITH(align_words("a", spans, "b", spans, attention, bad),
                      Catch::Contains("is not in (0, 1]") && Catch::Contains("use 1"));
  }
  CHECK_NOTHROW(align_words("a", spans, "b", spans, attention, 1));
  CHECK_THROWS_WITH(align_words("a", spans, "b b", {{0, 1}, {1, 3}}, attention, 1),
                    Catch::Contains("has 1 rows for 2 target tokens"));
  CHECK_THROWS_WITH(align_words("a a", {{0, 1}, {1, 3}}, "b", spans, attention, 1),
                    Catch::Contains("has 1 columns for 2 source tokens"));
  CHECK_THROWS_WITH(align_words("a", {{0, 4}}, "b", spans, attention, 1),
                    Catch::Contains("source token 0's span [0, 4)") &&
                        Catch::Contains("1-byte source text"));
}

// ---- Pharaoh and soft texts --------------------------------------------------------

TEST_CASE("Pharaoh lines round trip and malformed pairs name the line", "[word_alignment]") {
  const Pairs pairs = {{0, 0}, {1, 2}, {2, 1}, {10, 11}};
  CHECK(pharaoh(pairs) == "0-0 1-2 2-1 10-11");
  CHECK(parse_pharaoh(pharaoh(pairs), "align.txt line 1") == pairs);
  CHECK(pharaoh({}).empty());
  CHECK(parse_pharaoh("", "align.txt line 2").empty());
  CHECK(parse_pharaoh("  3-4\t5-6 \r", "align.txt line 2") == Pairs{{3, 4}, {5, 6}});

  CHECK_THROWS_WITH(parse_pharaoh("0-0 1-x 2-2", "align.txt line 3"),
                    Catch::StartsWith("align.txt line 3: '1-x'") &&
                        Catch::Contains("SOURCE-TARGET"));
  for (const char* bad : {"12", "-1-2", "1--2", "1-", "1-2-3", "1?2", "99999999999999999999-1"}) {
    INFO("line " << bad);
    CHECK_THROWS_AS(parse_pharaoh(bad, "x"), Error);
  }
}

TEST_CASE("soft alignment text is short and one target word per field", "[word_alignment]") {
  CHECK(soft_alignment_text({{0.875f, 0.125f, 0.0f}, {1.0f / 3, 2.0f / 3, 0.0f}}) ==
        "0.875,0.125,0 0.333,0.667,0");
  CHECK(soft_alignment_text({{1.0f}, {1e-5f}}) == "1 1e-05");
  CHECK(soft_alignment_text({}).empty());
}
