// t2t-bleu end to end, and t2t's BLEU against the Python scorers themselves
// on a larger random corpus: sacrebleu in the test Python, tensor2tensor in
// the T2T reference virtualenv of bench/ (tools/setup.sh installs both; a
// cross-check whose scorer is missing is reported as skipped).
#include <catch2/catch.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "t2t/metrics/sacrebleu.h"
#include "t2t/metrics/score.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Sentences built from pieces that exercise every tokenizer rule: ASCII and
// Unicode punctuation, digits with separators, symbols, Chinese, Greek
// capitals (final sigma when lowercased), odd whitespace, entities.
std::vector<std::string> random_sentences(std::mt19937& rng, size_t count,
                                          std::vector<std::string>* hyps) {
  static const std::vector<std::string> pieces = {
      "the", "The", "cat", "ΟΔΟΣ", "Σ", "ς", "İ", "Straße", "naïve", "1,000", "3.14", "2019",
      ".", ",", "-", "'", "\"", "&quot;", "&amp;", "&lt;", "<skipped>", "$", "%", "(", ")", "!",
      "?", ":", ";", "/", "«", "»", "—", "–", "…", "“", "”", "€", "©", "½", "²", "→", "我",
      "们", "的", "年", "，", "。", "！", "、", "（", "）", "𠀀", "㈠", "㎏", "♥", "✓",
      "\u3000", "\t", "\u00a0", "\u2003", "\u0345", "·", "'s", "e-mail", "10-20", "U.S.",
      "a.", "5.", ",5", "x", ".a", "ﬁ", "Å", "ǅ", "\u200b", "٣", "४", "Ⅻ", "¿", "।", "٪"};
  std::uniform_int_distribution<size_t> piece(0, pieces.size() - 1);
  static const char* separators[] = {"", " ", " ", " ", "  "};
  std::uniform_int_distribution<int> sep(0, 4), length(0, 14), edits(0, 3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto sentence = [&] {
    std::vector<std::string> s;
    for (int n = length(rng); n > 0; --n) s.push_back(pieces[piece(rng)] + separators[sep(rng)]);
    return s;
  };
  // Edits insert or drop whole pieces, so every line stays valid UTF-8.
  std::vector<std::string> refs;
  for (size_t i = 0; i < count; ++i) {
    std::vector<std::string> ref = sentence(), hyp = ref;
    const double kind = u(rng);
    if (kind < 0.3) {
      hyp = sentence();
    } else if (kind < 0.8) {
      for (int e = edits(rng); e > 0; --e) {
        const size_t at = std::uniform_int_distribution<size_t>(0, hyp.size())(rng);
        if (at < hyp.size() && u(rng) < 0.5) hyp.erase(hyp.begin() + at);
        else hyp.insert(hyp.begin() + at, pieces[piece(rng)] + " ");
      }
    }
    std::string hyp_line, ref_line;
    for (const auto& p : hyp) hyp_line += p;
    for (const auto& p : ref) ref_line += p;
    if (u(rng) < 0.1)  // ASCII only: multi-byte characters are left whole
      for (char& c : hyp_line) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    refs.push_back(ref_line);
    hyps->push_back(hyp_line);
  }
  return refs;
}

std::string lines_text(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::string format17(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const std::string kCrossCheckScript = t2t::test::source_dir() + "/tests/python/bleu_crosscheck.py";

// The random corpus the cross-checks score, also written to `dir` as
// hyp.txt and ref.txt for the Python scorers.
struct CrossCheckCorpus {
  std::vector<std::string> hyps, refs;
  explicit CrossCheckCorpus(const TempDir& dir) {
    std::mt19937 rng(20240611);
    refs = random_sentences(rng, 400, &hyps);
    write(dir / "hyp.txt", lines_text(hyps));
    write(dir / "ref.txt", lines_text(refs));
  }
};

// Where tools/setup.sh and bench/datagen/t2t_reference.py keep their
// environments: the same default as theirs.
std::string t2t_cache_dir() {
  const char* cache = std::getenv("T2T_CACHE");
  if (cache && *cache) return cache;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/t2t";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.cache/t2t";
}

}  // namespace

TEST_CASE("t2t-bleu prints sacreBLEU scores uncased then cased with signatures", "[bleu][tools]") {
  TempDir dir("bleu_tool");
  write(dir / "hyp.txt", "The cat sat on the mat.\nIt is raining today .\n");
  write(dir / "ref.txt", "the cat sat on the mat.\r\nIt is raining today.");  // CRLF, no final newline
  auto r = run_command("./t2t-bleu --translation=" + (dir / "hyp.txt") +
                       " --reference=" + (dir / "ref.txt"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto expected_cased = t2t::corpus_bleu({"The cat sat on the mat.", "It is raining today ."},
                                               {"the cat sat on the mat.", "It is raining today."},
                                               {"13a", false});
  CHECK_THAT(r.output, Catch::Contains("BLEU_uncased = 100.00 100.0/100.0/100.0/100.0"));
  CHECK_THAT(r.output, Catch::Contains("BLEU_cased" + expected_cased.to_string().substr(4)));
  CHECK_THAT(r.output, Catch::Contains("nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:t2t-"));
  CHECK_THAT(r.output, Catch::Contains("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp"));
  CHECK(r.output.find("BLEU_uncased") < r.output.find("BLEU_cased"));

  r = run_command("./t2t-bleu --bleu_variant=cased --metric=t2t --translation=" +
                  (dir / "hyp.txt") + " --reference=" + (dir / "ref.txt"));
  REQUIRE(r.exit_code == 0);
  char line[64];
  std::snprintf(line, sizeof line, "BLEU_cased = %6.2f\n",
                t2t::t2t_bleu({"The cat sat on the mat.", "It is raining today ."},
                              {"the cat sat on the mat.", "It is raining today."}, true));
  CHECK(r.output == line);
}

TEST_CASE("t2t-bleu picks the zh tokenizer for a Chinese reference", "[bleu][tools]") {
  TempDir dir("bleu_tool_zh");
  write(dir / "hyp.txt", "我们发布了新产品。\n");
  write(dir / "ref.txt", "我们发布了产品。\n");
  auto r = run_command("./t2t-bleu --bleu_variant=cased --translation=" + (dir / "hyp.txt") +
                       " --reference=" + (dir / "ref.txt"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("|tok:zh|"));
  r = run_command("./t2t-bleu --tokenize=intl --bleu_variant=cased --translation=" +
                  (dir / "hyp.txt") + " --reference=" + (dir / "ref.txt"));
  CHECK_THAT(r.output, Catch::Contains("|tok:intl|"));
}

TEST_CASE("t2t-bleu names both files and counts when the line counts differ", "[bleu][tools]") {
  TempDir dir("bleu_tool_errors");
  write(dir / "hyp.txt", "a\nb\nc\n");
  write(dir / "ref.txt", "a\nb\n");
  auto r = run_command("./t2t-bleu --translation=" + (dir / "hyp.txt") +
                       " --reference=" + (dir / "ref.txt"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--translation=" + (dir / "hyp.txt") + " has 3 lines"));
  CHECK_THAT(r.output, Catch::Contains("--reference=" + (dir / "ref.txt") + " has 2 lines"));

  r = run_command("./t2t-bleu --translation=" + (dir / "missing.txt") +
                  " --reference=" + (dir / "ref.txt"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--translation: cannot read '" + (dir / "missing.txt")));
  r = run_command("./t2t-bleu --translation=" + dir.path.string() +
                  " --reference=" + (dir / "ref.txt"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("is a directory"));

  r = run_command("./t2t-bleu --translation=" + (dir / "hyp.txt"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--reference is required"));
  r = run_command("./t2t-bleu --translation=a --reference=b --tokenize=moses");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--tokenize=moses"));
  r = run_command("./t2t-bleu --translation=a --reference=b --bleu_variant=lower");
  CHECK(r.exit_code == 2);
}

TEST_CASE("BLEU and its tokenizers match sacreBLEU run in Python on a random corpus",
          "[bleu][python]") {
  const std::string python = T2T_TEST_PYTHON;
  if (python.empty() || run_command("'" + python + "' -c 'import sacrebleu'").exit_code != 0)
    T2T_SKIP("no Python with sacrebleu (tools/setup.sh installs it)");
  TempDir dir("bleu_sacrebleu");
  const CrossCheckCorpus corpus(dir);
  auto r = run_command("'" + python + "' '" + kCrossCheckScript + "' sacrebleu '" +
                       (dir / "hyp.txt") + "' '" + (dir / "ref.txt") + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.output);
  std::string line;
  int compared = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string tok, score;
    int lowercase;
    fields >> tok >> lowercase >> score;
    std::string formatted;
    std::getline(fields, formatted);
    const auto ours = t2t::corpus_bleu(corpus.hyps, corpus.refs, {tok, lowercase != 0});
    INFO(tok << " lowercase=" << lowercase);
    // The same statistics give the same score up to the last bits, which
    // depend on the sacreBLEU version's order of floating-point operations.
    CHECK(ours.score == Approx(std::stod(score)).epsilon(1e-13));
    CHECK(" " + ours.to_string() == formatted);
    ++compared;
  }
  CHECK(compared == 10);
  write(dir / "all.txt", lines_text(corpus.hyps) + lines_text(corpus.refs));
  for (const char* tok : {"13a", "intl", "zh", "char", "none"}) {
    r = run_command("'" + python + "' '" + kCrossCheckScript + "' tokenize " + tok + " '" +
                    (dir / "all.txt") + "'");
    REQUIRE(r.exit_code == 0);
    std::string ours;
    for (const auto& l : corpus.hyps) ours += t2t::sacrebleu_tokenize(l, tok) + "\n";
    for (const auto& l : corpus.refs) ours += t2t::sacrebleu_tokenize(l, tok) + "\n";
    CHECK(ours == r.output);
  }
}

TEST_CASE("T2T-style BLEU matches T2T's own bleu_hook run in Python on a random corpus",
          "[bleu][python]") {
  // T2T's own code, installed by bench/datagen/t2t_reference.py.
  const std::string cache = t2t_cache_dir();
  const std::string t2t_python = "PYTHONPATH='" + cache + "/bench-t2t-shim' '" + cache +
                                 "/bench-t2t-venv/bin/python'";
  if (run_command(t2t_python + " -c 'from tensor2tensor.utils import bleu_hook'").exit_code != 0)
    T2T_SKIP("no T2T reference environment in " << cache
             << " (tools/setup.sh sets it up with bench/datagen/t2t_reference.py --check)");
  TempDir dir("bleu_t2t");
  const CrossCheckCorpus corpus(dir);
  auto r = run_command(t2t_python + " '" + kCrossCheckScript + "' t2t '" + (dir / "hyp.txt") +
                       "' '" + (dir / "ref.txt") + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output == "1 " + format17(t2t::t2t_bleu(corpus.hyps, corpus.refs, true)) + "\n0 " +
                        format17(t2t::t2t_bleu(corpus.hyps, corpus.refs, false)) + "\n");
}

TEST_CASE("t2t-bleu scores against several references, with chrF, chrF++ and TER",
          "[bleu][tools]") {
  TempDir dir("bleu_tool_multi");
  const std::vector<std::string> hyps = {"A cat sat on the mat.", "It is raining today ."};
  const std::vector<std::string> ref_a = {"the cat sat on the mat.", "It is raining today."};
  const std::vector<std::string> ref_b = {"A cat sat on a mat.", "Today it rains."};
  write(dir / "hyp.txt", lines_text(hyps));
  write(dir / "a.txt", lines_text(ref_a));
  write(dir / "b.txt", lines_text(ref_b));
  const std::string files = " --translation=" + (dir / "hyp.txt");
  // Repeated or comma-separated: the same two references.
  auto repeated = run_command("./t2t-bleu --bleu_variant=cased --metric=bleu --metric=chrf,ter" +
                              files + " --reference=" + (dir / "a.txt") + " --reference=" +
                              (dir / "b.txt"));
  auto commas = run_command("./t2t-bleu --bleu_variant=cased --metric=bleu,chrf,ter" + files +
                            " --reference=" + (dir / "a.txt") + "," + (dir / "b.txt"));
  INFO(repeated.output);
  REQUIRE(repeated.exit_code == 0);
  CHECK(repeated.output == commas.output);
  const t2t::References refs({ref_a, ref_b});
  t2t::SacreBleuOptions bleu;
  const auto b = t2t::corpus_bleu(hyps, refs, bleu);
  CHECK_THAT(repeated.output, Catch::Contains("BLEU_cased" + b.to_string().substr(4) + "\n  " +
                                              b.signature + "\n"));
  CHECK_THAT(b.signature, Catch::StartsWith("nrefs:2|"));
  // More than against either reference alone: n-grams of both count.
  CHECK(b.score > t2t::corpus_bleu(hyps, ref_a, bleu).score);
  CHECK(b.score > t2t::corpus_bleu(hyps, ref_b, bleu).score);
  const auto chrf = t2t::corpus_chrf(hyps, refs);
  t2t::TerOptions cased_ter;
  cased_ter.case_sensitive = true;
  const auto ter = t2t::corpus_ter(hyps, refs, cased_ter);
  CHECK_THAT(repeated.output, Catch::Contains("chrF2_cased = " + chrf.to_string().substr(8) +
                                              "\n  " + chrf.signature + "\n"));
  CHECK_THAT(repeated.output, Catch::Contains("TER_cased = " + ter.to_string().substr(6) +
                                              "\n  " + ter.signature + "\n"));

  // One score a line, then the signature.
  auto sentences = run_command("./t2t-bleu --metric=chrf++ --sentence_level" + files +
                               " --reference=" + (dir / "a.txt") + "," + (dir / "b.txt"));
  REQUIRE(sentences.exit_code == 0);
  const auto s0 = t2t::sentence_chrf(hyps[0], {ref_a[0], ref_b[0]}, {6, 2});
  const auto s1 = t2t::sentence_chrf(hyps[1], {ref_a[1], ref_b[1]}, {6, 2});
  CHECK(sentences.output == s0.to_string() + "\n" + s1.to_string() + "\n  " + s0.signature + "\n");
  auto ter_lines = run_command("./t2t-bleu --metric=ter --sentence_level" + files +
                               " --reference=" + (dir / "a.txt"));
  REQUIRE(ter_lines.exit_code == 0);
  CHECK_THAT(ter_lines.output, Catch::StartsWith(t2t::sentence_ter(hyps[0], {ref_a[0]}).to_string()));
  CHECK_THAT(ter_lines.output, Catch::Contains("|case:lc|"));  // TER's own default

  // Refusals name what is wrong.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--metric=t2t --reference=" + dir / "a.txt" + "," + dir / "b.txt", "takes one reference"},
      {"--metric=meteor --reference=" + dir / "a.txt", "--metric=meteor: use bleu, chrf"},
      {"--metric=chrf --tokenize=zh --reference=" + dir / "a.txt", "--tokenize applies to"},
      {"--metric=chrf++ --chrf_word_order=1 --reference=" + dir / "a.txt", "word order 2"},
      {"--ter_no_punct --reference=" + dir / "a.txt", "--ter_no_punct applies to TER"},
      {"--metric=bleu,ter --sentence_level --reference=" + dir / "a.txt", "give one --metric"},
      {"--sentence_level --bleu_variant=both --reference=" + dir / "a.txt", "cased or uncased"},
      {"--smooth_value=0.2 --reference=" + dir / "a.txt", "floor or add-k"},
      {"--reference=" + dir / "a.txt" + ",,", "empty item"},
  };
  for (const auto& [flags, message] : refused) {
    auto r = run_command("./t2t-bleu" + files + " " + flags);
    INFO(flags << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(message));
  }
  write(dir / "short.txt", "one line\n");
  auto short_ref = run_command("./t2t-bleu" + files + " --reference=" + (dir / "a.txt") + "," +
                               (dir / "short.txt"));
  CHECK(short_ref.exit_code == 1);
  CHECK_THAT(short_ref.output, Catch::Contains("--reference=" + (dir / "short.txt") + " has 1 lines"));
}
