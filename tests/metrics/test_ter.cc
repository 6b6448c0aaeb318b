// TER against numbers worked out by hand (and confirmed with sacreBLEU
// 2.6.0), then against sacreBLEU itself, run in the test Python, on a random
// corpus for every combination of the tokenizer options.
#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "t2t/core/error.h"
#include "t2t/metrics/ter.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

std::vector<std::u32string> words(const std::u32string& text) {
  std::vector<std::u32string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(U' ', start);
    if (end == std::u32string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

const std::string kVersionSuffix = std::string("|version:t2t-") + T2T_VERSION;

}  // namespace

TEST_CASE("TER counts a moved run of words as one shift", "[ter]") {
  // "on the mat" goes back to the end in one shift; nothing else differs.
  auto r = t2t::sentence_ter("on the mat the cat sat", {"the cat sat on the mat"});
  CHECK(r.num_edits == 1);
  CHECK(r.ref_length == 6);
  CHECK(r.score == 100 * (1.0 / 6.0));
  CHECK(r.to_string() == "TER = 16.67");
  // A shift and nothing else beats the two substitutions a swap would need.
  CHECK(t2t::ter_edits(words(U"b c a d e"), words(U"a b c d e")) == 1);
  CHECK(t2t::ter_edits(words(U"a b c d e f"), words(U"d e f a b c")) == 1);
  // Shift, then substitute: "mat" moves to the end, "a" is replaced.
  CHECK(t2t::ter_edits(words(U"mat the cat sat on a"), words(U"the cat sat on the mat")) == 2);
  CHECK(t2t::ter_edits(words(U"a b c"), words(U"a b c")) == 0);
  CHECK(t2t::ter_edits(words(U"a b c"), words(U"x y")) == 3);
}

TEST_CASE("TER stops at 1000 shift candidates and drops the shift found last", "[ter]") {
  // Two-word vocabularies make many candidates. sacreBLEU gives 6 here;
  // keeping the last shift, or searching on without a cap, would give 5.
  CHECK(t2t::ter_edits(words(U"a a b b b a b b b b b b a a a a b a b b a"),
                       words(U"a b a b a b b a b a a b b a b a b b b b a b")) == 6);
}

TEST_CASE("TER of an empty hypothesis or reference", "[ter]") {
  auto r = t2t::sentence_ter("", {"a b c"});
  CHECK(r.num_edits == 3);  // three insertions
  CHECK(r.ref_length == 3);
  CHECK(r.score == 100);
  // An empty reference: one edit per hypothesis word over a length of 0,
  // which sacreBLEU scores as 100.
  r = t2t::sentence_ter("a b", {""});
  CHECK(r.num_edits == 2);
  CHECK(r.ref_length == 0);
  CHECK(r.score == 100);
  r = t2t::sentence_ter(" \t", {""});
  CHECK(r.num_edits == 0);
  CHECK(r.score == 0);
  CHECK(t2t::ter_edits({}, words(U"a b")) == 2);
  CHECK(t2t::ter_edits(words(U"a b"), {}) == 2);
}

TEST_CASE("TER takes the best reference's edits over the mean reference length", "[ter]") {
  // 1 edit against "a b c d", 3 against "x y"; lengths 4 and 2.
  auto r = t2t::sentence_ter("a b c", {"a b c d", "x y"});
  CHECK(r.num_edits == 1);
  CHECK(r.ref_length == 3);
  CHECK(r.to_string() == "TER = 33.33");
  CHECK(r.signature == "nrefs:2|case:lc|tok:tercom|norm:no|punct:yes|asian:no" + kVersionSuffix);

  // A corpus adds up edits and lengths before dividing: (1 + 1 + 3) / 13.
  const auto c = t2t::corpus_ter({"on the mat the cat sat", "a b", "x"},
                                 t2t::References({{"the cat sat on the mat", "a b c", "x y z w"}}));
  CHECK(c.num_edits == 5);
  CHECK(c.ref_length == 13);
  CHECK(c.score == 100 * (5.0 / 13.0));
  CHECK(c.to_string() == "TER = 38.46");

  const auto gaps = t2t::References::with_gaps({{std::string("a b"), std::string("c")},
                                                {std::string("a"), std::nullopt}});
  const auto v = t2t::corpus_ter({"a b", "c"}, gaps);
  CHECK(v.num_edits == 0);
  CHECK(v.ref_length == 2.5);  // (2 + 1) / 2 + 1
  CHECK(v.signature.rfind("nrefs:var|", 0) == 0);
}

TEST_CASE("TER's options: case, normalisation, punctuation, Asian characters", "[ter]") {
  CHECK(t2t::sentence_ter("The Cat", {"the cat"}).num_edits == 0);
  t2t::TerOptions cased;
  cased.case_sensitive = true;
  CHECK(t2t::sentence_ter("The Cat", {"the cat"}, cased).num_edits == 2);

  const std::string western = "Hello, World&amp;Co's 1,000.5-7 end. ";
  const std::string asian = "我们发布了产品。「新」（ＡＢ）！ ひらがなカタカナ";
  t2t::TerOptions o;
  CHECK(t2t::tercom_tokenize(western, o) == "hello, world&amp;co's 1,000.5-7 end.");
  o.normalized = true;
  CHECK(t2t::tercom_tokenize(western, o) == "hello , world & co 's 1,000.5 - 7 end .");
  CHECK(t2t::tercom_tokenize(asian, o) == "我们发布了产品。「新」（ａｂ）！ ひらがなカタカナ");
  o.asian_support = true;
  CHECK(t2t::tercom_tokenize(asian, o) ==
        "我 们 发 布 了 产 品 。 「 新 」 （ ａｂ ） ！ ひらがなカタカナ");
  o = {};
  o.no_punct = true;
  CHECK(t2t::tercom_tokenize(western, o) == "hello world&ampco's 10005-7 end");
  o.asian_support = true;
  CHECK(t2t::tercom_tokenize(asian, o) == "我们发布了产品新ａｂ ひらがなカタカナ");
  o = {true, true, true, true};
  CHECK(t2t::tercom_tokenize(western, o) == "Hello World & Co 's 10005 - 7 end");
  CHECK(t2t::tercom_tokenize(asian, o) == "我 们 发 布 了 产 品 新 ＡＢ ひらがなカタカナ");
  CHECK(t2t::tercom_tokenize("a\xff b", {}) == "a\xEF\xBF\xBD b");  // invalid byte: U+FFFD
}

TEST_CASE("TER normalises a reference twice, as sacreBLEU does", "[ter]") {
  t2t::TerOptions o;
  o.normalized = true;
  // "'s" splits off only before a space, and the first pass turns the
  // no-break space into one: the reference ends as "x 's y", the
  // hypothesis (normalised once) as "x's y".
  CHECK(t2t::sentence_ter("x's y", {"x's\u00a0y"}, o).num_edits == 0);
  const auto r = t2t::sentence_ter("x's\u00a0y", {"x's y"}, o);
  CHECK(r.num_edits == 2);
  CHECK(r.ref_length == 3);
}

TEST_CASE("TER's signature names its options and refuses mismatched counts", "[ter]") {
  auto r = t2t::corpus_ter({"a"}, t2t::References({{"a"}}));
  CHECK(r.signature == "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no" + kVersionSuffix);
  CHECK(r.to_string() == "TER = 0.00");
  r = t2t::corpus_ter({"a"}, t2t::References({{"a"}, {"b"}}), {true, true, true, true});
  CHECK(r.signature ==
        "nrefs:2|case:mixed|tok:tercom|norm:yes|punct:no|asian:yes" + kVersionSuffix);
  CHECK_THROWS_AS(t2t::corpus_ter({"a", "b"}, t2t::References({{"a"}})), t2t::Error);
}

namespace {

// Words and pieces that exercise every tokenizer rule: case, ASCII
// punctuation, possessives, digits with separators, entities, Chinese and
// Japanese characters, CJK and full-width punctuation, odd whitespace.
const std::vector<std::string> kPieces = {
    "the", "The", "cat", "sat", "on", "mat", "a", "of", "and", "dog", "is", "red", "blue",
    "John's", "it's", "'s", "Straße", "İstanbul", "ΟΔΟΣ", "1,000", "3.14", "2019", "10-20",
    "5-", "-3", "U.S.", "e.g.", "x.y", "a,b", "5.", ",5", ".", ",", "-", "'", "\"", "?", "!",
    ":", ";", "(", ")", "[", "]", "{", "}", "/", "\\", "$", "%", "@", "#", "*", "+", "=", "<",
    ">", "~", "^", "_", "|", "`", "&quot;", "&amp;", "&lt;", "&gt;", "&amp;lt;", "我", "们",
    "中国", "日本語", "ひらがな", "カタカナ", "ㇰ", "㈠", "㎏", "豈", "︰", "⺀", "，", "。", "！",
    "、", "（", "）", "「", "」", "〈", "・", "｡", "．", "：", "ＡＢ", "x's\u00a0y",
    "a\u3000b", "\xff"};

std::string upper_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A corpus where shifts pay: hypotheses and second references are the
// first references with runs of pieces moved, pieces dropped, inserted,
// replaced or upper-cased.
struct TerCorpus {
  std::vector<std::string> hyps, refs, refs2;

  explicit TerCorpus(const TempDir& dir) {
    std::mt19937 rng(20240917);
    auto uniform = [&](size_t lo, size_t hi) {
      return std::uniform_int_distribution<size_t>(lo, hi)(rng);
    };
    auto piece = [&] { return kPieces[uniform(0, kPieces.size() - 1)]; };
    auto edit = [&](std::vector<std::string> s) {
      for (size_t e = uniform(0, 5); e > 0; --e) {
        const size_t kind = uniform(0, 9);
        if (kind < 4 && s.size() > 2) {
          const size_t length = uniform(1, std::min<size_t>(6, s.size() - 1));
          const size_t from = uniform(0, s.size() - length);
          std::vector<std::string> run(s.begin() + from, s.begin() + from + length);
          s.erase(s.begin() + from, s.begin() + from + length);
          s.insert(s.begin() + uniform(0, s.size()), run.begin(), run.end());
        } else if (kind < 6 && !s.empty()) {
          s.erase(s.begin() + uniform(0, s.size() - 1));
        } else if (kind < 8) {
          s.insert(s.begin() + uniform(0, s.size()), piece());
        } else if (!s.empty()) {
          std::string& p = s[uniform(0, s.size() - 1)];
          p = kind == 8 ? upper_ascii(p) : piece();
        }
      }
      return s;
    };
    auto line = [&](const std::vector<std::string>& s) {
      static const char* separators[] = {" ", " ", " ", " ", "", "  ", "\t"};
      std::string out;
      for (const auto& p : s) out += p + separators[uniform(0, 6)];
      return out;
    };
    for (int i = 0; i < 300; ++i) {
      std::vector<std::string> ref;
      for (size_t n = uniform(0, 24); n > 0; --n) ref.push_back(piece());
      hyps.push_back(uniform(0, 40) == 0 ? "" : line(edit(ref)));
      refs.push_back(line(ref));
      refs2.push_back(uniform(0, 20) == 0 ? "" : line(edit(ref)));
    }
    t2t::test::write_lines(dir / "hyp.txt", hyps);
    t2t::test::write_lines(dir / "ref.txt", refs);
    t2t::test::write_lines(dir / "ref2.txt", refs2);
    std::vector<std::string> all = hyps;
    all.insert(all.end(), refs.begin(), refs.end());
    t2t::test::write_lines(dir / "all.txt", all);
  }
};

// The options a line of ter_crosscheck.py's output starts with.
t2t::TerOptions read_options(std::istream& in, std::string* flags) {
  int n, p, a, c;
  in >> n >> p >> a >> c;
  *flags = std::to_string(n) + std::to_string(p) + std::to_string(a) + std::to_string(c);
  return {n != 0, p != 0, a != 0, c != 0};
}

std::vector<std::string> output_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

const std::string kCrossCheckScript = t2t::test::source_dir() + "/tests/python/ter_crosscheck.py";

}  // namespace

TEST_CASE("TER matches sacreBLEU run in Python on a random corpus", "[ter][python]") {
  const std::string python = T2T_TEST_PYTHON;
  if (python.empty() || run_command("'" + python + "' -c 'import sacrebleu'").exit_code != 0)
    T2T_SKIP("no Python with sacrebleu (tools/setup.sh installs it)");
  TempDir dir("ter_sacrebleu");
  const TerCorpus corpus(dir);
  const std::string script = "'" + python + "' '" + kCrossCheckScript + "' ";
  const std::string hyp = "'" + (dir / "hyp.txt") + "'";
  const std::string one_ref = "'" + (dir / "ref.txt") + "'";
  const std::string two_refs = one_ref + " '" + (dir / "ref2.txt") + "'";

  for (int nrefs : {1, 2}) {
    INFO("references: " << nrefs);
    const t2t::References refs = nrefs == 1 ? t2t::References({corpus.refs})
                                            : t2t::References({corpus.refs, corpus.refs2});
    auto r = run_command(script + "corpus " + hyp + " " + (nrefs == 1 ? one_ref : two_refs));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    int compared = 0;
    for (const auto& line : output_lines(r.output)) {
      std::istringstream fields(line);
      std::string kind, flags, score, signature, formatted;
      int64_t edits;
      double length;
      fields >> kind;
      const t2t::TerOptions o = read_options(fields, &flags);
      fields >> score >> edits >> length >> signature;
      std::getline(fields, formatted);
      INFO("options " << flags);
      const auto ours = t2t::corpus_ter(corpus.hyps, refs, o);
      CHECK(static_cast<int64_t>(ours.num_edits) == edits);
      CHECK(ours.ref_length == length);
      // Same statistics summed in the same order: the same double.
      CHECK(ours.score == Approx(std::stod(score)).epsilon(1e-12));
      CHECK(" " + ours.to_string() == formatted);
      CHECK(ours.signature == signature + kVersionSuffix);
      ++compared;
    }
    CHECK(compared == 16);

    r = run_command(script + "sentence 7 " + hyp + " " + (nrefs == 1 ? one_ref : two_refs));
    REQUIRE(r.exit_code == 0);
    compared = 0;
    int mismatches = 0;
    for (const auto& line : output_lines(r.output)) {
      std::istringstream fields(line);
      std::string kind, flags, score;
      size_t i;
      int64_t edits;
      double length;
      fields >> kind;
      const t2t::TerOptions o = read_options(fields, &flags);
      fields >> i >> score >> edits >> length;
      std::vector<std::string> segment_refs = {corpus.refs[i]};
      if (nrefs == 2) segment_refs.push_back(corpus.refs2[i]);
      const auto ours = t2t::sentence_ter(corpus.hyps[i], segment_refs, o);
      const bool same = static_cast<int64_t>(ours.num_edits) == edits &&
                        ours.ref_length == length && ours.score == std::stod(score);
      if (!same && ++mismatches <= 5) {
        INFO("line " << i << " options " << flags << ": " << corpus.hyps[i]);
        CHECK(ours.num_edits == edits);
        CHECK(ours.ref_length == length);
        CHECK(ours.score == std::stod(score));
      }
      ++compared;
    }
    CHECK(mismatches == 0);
    CHECK(compared == static_cast<int>(16 * ((corpus.hyps.size() + 6) / 7)));
  }

  auto r = run_command(script + "tokenize '" + (dir / "all.txt") + "'");
  REQUIRE(r.exit_code == 0);
  const auto theirs = output_lines(r.output);
  std::vector<std::string> lines = corpus.hyps;
  lines.insert(lines.end(), corpus.refs.begin(), corpus.refs.end());
  REQUIRE(theirs.size() == 16 * lines.size());
  int mismatches = 0;
  for (size_t k = 0; k < theirs.size(); ++k) {
    std::istringstream fields(theirs[k]);
    std::string kind, flags;
    size_t i;
    fields >> kind;
    const t2t::TerOptions o = read_options(fields, &flags);
    fields >> i;
    const std::string ours =
        "tok " + std::string(1, flags[0]) + " " + flags[1] + " " + flags[2] + " " + flags[3] +
        " " + std::to_string(i) + " " + t2t::tercom_tokenize(lines[i], o);
    if (ours != theirs[k] && ++mismatches <= 5) CHECK(ours == theirs[k]);
  }
  CHECK(mismatches == 0);
}
