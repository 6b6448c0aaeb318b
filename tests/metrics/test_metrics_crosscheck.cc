// BLEU with several references and each of its options, chrF and chrF++
// against sacreBLEU itself, run in the test Python (tools/setup.sh installs
// it; without it the tests show as skipped): on a random corpus that hits
// every tokenizer rule, and on real multi-reference English and Chinese
// test sets drawn from Tatoeba (sentences translated more than once).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "t2t/metrics/score.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

const std::string kScript = t2t::test::source_dir() + "/tests/python/metrics_crosscheck.py";

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& l : lines) out << l << "\n";
}

bool have_sacrebleu() {
  const std::string python = T2T_TEST_PYTHON;
  return !python.empty() &&
         run_command("'" + python + "' -c 'import sacrebleu.metrics'").exit_code == 0;
}

// A hypothesis and two references a sentence: the references share most of
// their pieces, so that the clipping by the most frequent reference and the
// closest length both matter.
struct Corpus {
  std::vector<std::string> hyps;
  std::vector<std::vector<std::string>> refs{2};
};

Corpus random_corpus(size_t count) {
  static const std::vector<std::string> pieces = {
      "the", "The", "cat", "cats", "ΟΔΟΣ", "İ", "naïve", "1,000", "3.14", "2019", ".", ",",
      "-", "'s", "\"", "&quot;", "&amp;", "(", ")", "!", "?", ":", "(hi)", "a.", ".a", "e-mail",
      "我", "们", "的", "年", "，", "。", "！", "、", "東京", "ひらがな", "カタカナ", "☺", "€",
      "x", "y", "z", "\u3000", "\t", "\u00a0", "Straße", "U.S.", "10-20"};
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<size_t> piece(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 16);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto join = [](const std::vector<std::string>& words, bool spaced) {
    std::string s;
    for (size_t i = 0; i < words.size(); ++i) s += (i && spaced ? " " : "") + words[i];
    return s;
  };
  auto edit = [&](std::vector<std::string> w) {
    for (int e = std::uniform_int_distribution<int>(0, 4)(rng); e > 0; --e) {
      const size_t at = std::uniform_int_distribution<size_t>(0, w.size())(rng);
      const double kind = u(rng);
      if (at < w.size() && kind < 0.4) w.erase(w.begin() + static_cast<long>(at));
      else if (kind < 0.7) w.insert(w.begin() + static_cast<long>(at), pieces[piece(rng)]);
      else if (w.size() > 3) std::rotate(w.begin(), w.begin() + 1, w.begin() + 3);  // a shift
    }
    return w;
  };
  Corpus c;
  for (size_t i = 0; i < count; ++i) {
    std::vector<std::string> ref;
    for (int n = length(rng); n > 0; --n) ref.push_back(pieces[piece(rng)]);
    const bool spaced = u(rng) < 0.8;
    c.refs[0].push_back(join(ref, spaced));
    c.refs[1].push_back(join(u(rng) < 0.1 ? std::vector<std::string>{} : edit(ref), spaced));
    std::string hyp = join(u(rng) < 0.2 ? edit(edit(ref)) : edit(ref), spaced);
    if (u(rng) < 0.1)
      for (char& ch : hyp) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    c.hyps.push_back(hyp);
  }
  return c;
}

// A config for the script, and the same metric for t2t.
struct Check {
  std::string json;
  t2t::MetricSpec spec;
  bool sentence = false;
};

std::vector<Check> checks() {
  std::vector<Check> out;
  for (const char* tok : {"13a", "intl", "zh", "char", "none"})
    for (bool lc : {false, true}) {
      Check c{std::string("{\"metric\": \"bleu\", \"tokenize\": \"") + tok +
                  "\", \"lowercase\": " + (lc ? "true" : "false") + "}",
              t2t::metric_spec("bleu")};
      c.spec.bleu.tokenize = tok;
      c.spec.bleu.lowercase = lc;
      out.push_back(c);
    }
  for (const char* smooth : {"floor", "add-k", "none"}) {
    Check c{std::string("{\"metric\": \"bleu\", \"smooth_method\": \"") + smooth + "\"}",
            t2t::metric_spec("bleu")};
    c.spec.bleu.smooth_method = smooth;
    out.push_back(c);
  }
  {
    Check c{"{\"metric\": \"bleu\", \"smooth_method\": \"floor\", \"smooth_value\": 0.3, "
            "\"effective_order\": true}",
            t2t::metric_spec("bleu")};
    c.spec.bleu.smooth_method = "floor";
    c.spec.bleu.smooth_value = 0.3;
    c.spec.bleu.effective_order = true;
    out.push_back(c);
  }
  out.push_back({"{\"metric\": \"chrf\"}", t2t::metric_spec("chrf")});
  out.push_back({"{\"metric\": \"chrf\", \"word_order\": 2}", t2t::metric_spec("chrf++")});
  {
    Check c{"{\"metric\": \"chrf\", \"char_order\": 4, \"word_order\": 1, \"beta\": 1, "
            "\"lowercase\": true, \"whitespace\": true}",
            t2t::metric_spec("chrf")};
    c.spec.chrf = {4, 1, 1, true, true, false};
    out.push_back(c);
  }
  {
    Check c{"{\"metric\": \"chrf\", \"word_order\": 2, \"eps_smoothing\": true, \"beta\": 3}",
            t2t::metric_spec("chrf++")};
    c.spec.chrf.eps_smoothing = true;
    c.spec.chrf.beta = 3;
    out.push_back(c);
  }
  out.push_back({"{\"metric\": \"ter\"}", t2t::metric_spec("ter")});
  out.push_back({"{\"metric\": \"bleu\", \"effective_order\": true, \"level\": \"sentence\"}",
                 t2t::metric_spec("bleu"), true});
  out.push_back({"{\"metric\": \"chrf\", \"word_order\": 2, \"level\": \"sentence\"}",
                 t2t::metric_spec("chrf++"), true});
  out.push_back({"{\"metric\": \"ter\", \"level\": \"sentence\"}", t2t::metric_spec("ter"), true});
  return out;
}

// Runs every check on `hyps` against the first `nrefs` reference streams.
void compare_with_sacrebleu(const TempDir& dir, const Corpus& c, size_t nrefs) {
  auto list = checks();
  std::string json = "[";
  for (size_t i = 0; i < list.size(); ++i) json += (i ? ", " : "") + list[i].json;
  write_lines(dir / "configs.json", {json + "]"});
  write_lines(dir / "hyp.txt", c.hyps);
  std::string ref_args;
  std::vector<std::vector<std::string>> streams;
  for (size_t r = 0; r < nrefs; ++r) {
    write_lines(dir / ("ref" + std::to_string(r)), c.refs[r]);
    ref_args += " '" + (dir / ("ref" + std::to_string(r))) + "'";
    streams.push_back(c.refs[r]);
  }
  const auto r = run_command(std::string("'") + T2T_TEST_PYTHON + "' '" + kScript + "' '" +
                             (dir / "configs.json") + "' '" + (dir / "hyp.txt") + "'" + ref_args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const t2t::References refs(streams);
  std::istringstream lines(r.output);
  for (const Check& check : list) {
    std::string line;
    REQUIRE(std::getline(lines, line));
    INFO(check.json << " with " << nrefs << " references");
    std::istringstream fields(line);
    if (check.sentence) {
      const auto ours = t2t::sentence_scores(check.spec, c.hyps, refs);
      for (const auto& s : ours) {
        double theirs = -1;
        fields >> theirs;
        CHECK(s.score == Approx(theirs).epsilon(1e-12).margin(1e-12));
      }
    } else {
      double theirs = -1;
      std::string signature;
      fields >> theirs >> signature;
      const auto ours = t2t::corpus_score(check.spec, c.hyps, refs);
      CHECK(ours.score == Approx(theirs).epsilon(1e-12).margin(1e-12));
      // The same signature but for the version: sacreBLEU's is its own.
      CHECK(ours.signature.substr(0, ours.signature.find("|version:")) ==
            signature.substr(0, signature.find("|version:")));
    }
  }
}

// Tatoeba's sentences translated more than once: one translation is the
// "hypothesis", two others (or one and a reordering of it) the references.
// English sources give Chinese references, Chinese sources English ones.
Corpus tatoeba_multi_reference(const std::string& dir, bool chinese_refs) {
  const auto en = t2t::test::read_lines(dir + "/train.en");
  const auto zh = t2t::test::read_lines(dir + "/train.zh");
  std::map<std::string, std::vector<std::string>> translations;
  for (size_t i = 0; i < en.size() && i < zh.size(); ++i) {
    if (chinese_refs) translations[en[i]].push_back(zh[i]);
    else translations[zh[i]].push_back(en[i]);
  }
  Corpus c;
  for (const auto& [source, t] : translations) {
    if (t.size() < 2) continue;
    c.hyps.push_back(t[0]);
    c.refs[0].push_back(t[1]);
    if (t.size() > 2) {
      c.refs[1].push_back(t[2]);
    } else {
      // A second reference that differs a little: English with its last
      // word first, Chinese without its final full stop.
      std::string r = t[1];
      const size_t space = r.rfind(' ');
      const std::string stop = "。";
      if (space != std::string::npos)
        r = r.substr(space + 1) + " " + r.substr(0, space);
      else if (r.size() > stop.size() && r.compare(r.size() - stop.size(), stop.size(), stop) == 0)
        r.resize(r.size() - stop.size());
      c.refs[1].push_back(r);
    }
  }
  return c;
}

}  // namespace

TEST_CASE("BLEU with one and two references, chrF, chrF++ and TER equal sacreBLEU's on a "
          "random corpus", "[metrics][python]") {
  if (!have_sacrebleu()) T2T_SKIP("no Python with sacrebleu (tools/setup.sh installs it)");
  TempDir dir("metrics_crosscheck");
  const Corpus corpus = random_corpus(300);
  compare_with_sacrebleu(dir, corpus, 1);
  compare_with_sacrebleu(dir, corpus, 2);
}

TEST_CASE("scores on Tatoeba's multi-reference English and Chinese sets equal sacreBLEU's, "
          "and t2t-bleu prints them", "[metrics][python][tatoeba]") {
  const std::string data = t2t::test::source_dir() + "/../shared/data/tatoeba-enzh";
  if (!std::filesystem::exists(data + "/train.en"))
    T2T_SKIP("no Tatoeba data at " << data << " (present in CI only)");
  if (!have_sacrebleu()) T2T_SKIP("no Python with sacrebleu (tools/setup.sh installs it)");
  for (bool chinese : {true, false}) {
    TempDir dir(chinese ? "metrics_tatoeba_zh" : "metrics_tatoeba_en");
    const Corpus corpus = tatoeba_multi_reference(data, chinese);
    INFO((chinese ? "English to Chinese, " : "Chinese to English, ") << corpus.hyps.size()
                                                                      << " sentences");
    REQUIRE(corpus.hyps.size() > 300);
    compare_with_sacrebleu(dir, corpus, 2);

    // The tool's printed figures: sacreBLEU's to the second decimal.
    const auto r = run_command("./t2t-bleu --metric=bleu,chrf,chrf++,ter --bleu_variant=cased "
                               "--translation=" + (dir / "hyp.txt") + " --reference=" +
                               (dir / "ref0") + " --reference=" + (dir / "ref1"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const t2t::References refs(corpus.refs);
    for (const char* name : {"bleu", "chrf", "chrf++", "ter"}) {
      t2t::MetricSpec spec = t2t::metric_spec(name);
      spec.set_lowercase(false);
      spec.bleu.tokenize = chinese ? "zh" : "13a";
      const auto s = t2t::corpus_score(spec, corpus.hyps, refs);
      char line[64];
      std::snprintf(line, sizeof line, "%s_cased = %.2f", s.name.c_str(), s.score);
      CHECK_THAT(r.output, Catch::Contains(line));
      CHECK_THAT(r.output, Catch::Contains("nrefs:2|"));
    }
  }
}
