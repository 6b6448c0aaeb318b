// End-to-end tests of what t2t-decoder lets a user ask of the output, on a
// briefly trained transformer_tiny: terms (a constraints file and a
// glossary), target prefixes, word alignments (a column, a file, and for
// --score_file), ensembles, and the errors for what cannot be honoured.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/translate/word_alignment.h"
#include "tests/support/sample_run.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::read_lines;
using t2t::test::run_command;
using t2t::test::SampleRun;
using t2t::test::trained_sample_run;
using t2t::test::TempDir;

namespace {

const SampleRun& trained() { return trained_sample_run("guided_e2e"); }

const std::string kDecode = "--decode_hparams='beam_size=4,extra_length=20' --threads=2";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every pair of a Pharaoh line inside [0, source_words) x [0, target_words).
void check_pharaoh(const std::string& line, size_t source_words, size_t target_words) {
  for (const auto& [i, j] : t2t::parse_pharaoh(line, "alignment")) {
    CHECK(i >= 0);
    CHECK(static_cast<size_t>(i) < source_words);
    CHECK(j >= 0);
    CHECK(static_cast<size_t>(j) < target_words);
  }
}

}  // namespace

TEST_CASE("t2t-decoder puts every term and prefix into its translations", "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("guided_terms");
  const std::string in = dir / "in.en", out = dir / "out.zh";
  t2t::write_file_atomic(in, "I like music.\nHello.\nWhere is the station?\n\n");
  t2t::write_file_atomic(dir / "terms.tsv", "音乐\t北京\n喜欢\n\n\n");
  t2t::write_file_atomic(dir / "prefix.txt", "\n我们\n\n\n");
  t2t::write_file_atomic(dir / "glossary.tsv", "# terms\nstation\t车站\n");
  const auto r = run_command(t.decoder(kDecode + " --decode_from_file=" + in +
                                       " --decode_to_file=" + out + " --constraints_file=" +
                                       (dir / "terms.tsv") + " --prefix_file=" +
                                       (dir / "prefix.txt") + " --glossary=" +
                                       (dir / "glossary.tsv")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto lines = read_lines(out);
  REQUIRE(lines.size() == 4);
  CHECK(contains(lines[0], "音乐"));
  CHECK(contains(lines[0], "北京"));
  CHECK(t2t::starts_with(lines[1], "我们"));
  CHECK(contains(lines[1], "喜欢"));
  CHECK(contains(lines[2], "车站"));  // from the glossary
  CHECK(lines[3].empty());
  CHECK(contains(r.output, "3 of 3 constrained lines hold every term"));
}

TEST_CASE("t2t-decoder writes word alignments as a column, a file, or for scored pairs",
          "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("guided_alignment");
  const std::string in = dir / "in.en";
  t2t::write_file_atomic(in, "I like music.\nWhere is the station?\n");
  auto r = run_command(t.decoder("--decode_hparams='beam_size=2,extra_length=5,alignment=hard' "
                                 "--threads=2 --decode_from_file=" + in + " --decode_to_file=" +
                                 (dir / "column.zh")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto column = read_lines(dir / "column.zh");
  REQUIRE(column.size() == 2);
  for (const auto& line : column) {
    const auto parts = t2t::split(line, '\t');
    REQUIRE(parts.size() == 2);
    CHECK_FALSE(parts[1].empty());  // every target word gets a source word
    check_pharaoh(parts[1], 5, t2t::alignment_words(parts[0]).size());
  }
  // The same alignments in a file of their own; the translations unchanged.
  r = run_command(t.decoder("--decode_hparams='beam_size=2,extra_length=5,alignment=hard' "
                            "--threads=2 --decode_from_file=" + in + " --decode_to_file=" +
                            (dir / "plain.zh") + " --alignment_file=" + (dir / "align.txt")));
  REQUIRE(r.exit_code == 0);
  const auto plain = read_lines(dir / "plain.zh"), align = read_lines(dir / "align.txt");
  REQUIRE(plain.size() == 2);
  REQUIRE(align.size() == 2);
  for (size_t i = 0; i < 2; ++i) CHECK(column[i] == plain[i] + "\t" + align[i]);
  // Soft: one comma-separated list per target word.
  r = run_command(t.decoder("--decode_hparams='beam_size=2,extra_length=5,alignment=soft' "
                            "--threads=2 --decode_from_file=" + in + " --decode_to_file=" +
                            (dir / "soft.zh") + " --alignment_file=" + (dir / "soft.txt")));
  REQUIRE(r.exit_code == 0);
  const auto soft = read_lines(dir / "soft.txt");
  REQUIRE(soft.size() == 2);
  CHECK(t2t::split(soft[0], ' ').size() == t2t::alignment_words(plain[0]).size());
  // Scored pairs: the score, then the pair's alignment.
  t2t::write_file_atomic(dir / "pairs.tsv", "I like music.\t我喜欢音乐。\n");
  r = run_command(t.decoder("--decode_hparams=alignment=hard --score_file=" +
                            (dir / "pairs.tsv") + " --decode_to_file=" + (dir / "scores.txt")));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto scores = read_lines(dir / "scores.txt");
  REQUIRE(scores.size() == 1);
  const auto parts = t2t::split(scores[0], '\t');
  REQUIRE(parts.size() == 2);
  CHECK(std::stod(parts[0]) < 0);
  check_pharaoh(parts[1], 4, 6);
}

TEST_CASE("t2t-decoder --ensemble of a model with itself translates as the model alone",
          "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("guided_ensemble");
  const std::string in = dir / "in.en";
  t2t::write_file_atomic(in, "I like music.\nHello.\n");
  auto r = run_command(t.decoder(kDecode + " --decode_from_file=" + in + " --decode_to_file=" +
                                 (dir / "one.zh")));
  REQUIRE(r.exit_code == 0);
  r = run_command(t.decoder(kDecode + " --decode_from_file=" + in + " --decode_to_file=" +
                            (dir / "two.zh") + " --ensemble=" + t.run +
                            " --ensemble_weights=1,1"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "ensemble member 2"));
  CHECK(read_lines(dir / "one.zh") == read_lines(dir / "two.zh"));
  r = run_command(t.decoder(kDecode + " --decode_from_file=" + in + " --ensemble=" + t.run +
                            " --ensemble_weights=1"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--ensemble_weights needs one weight per model"));
}

TEST_CASE("t2t-decoder refuses terms and prefixes it cannot honour, naming the flag",
          "[decoder][e2e]") {
  const auto& t = trained();
  TempDir dir("guided_refused");
  const std::string in = dir / "in.en";
  t2t::write_file_atomic(in, "Hello.\nI like music.\n");
  t2t::write_file_atomic(dir / "many.tsv", "我\t你\t他\t她\n\n");
  auto r = run_command(t.decoder(kDecode + " --decode_from_file=" + in + " --constraints_file=" +
                                 (dir / "many.tsv")));
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "--decode_hparams beam_size"));
  CHECK(contains(r.output, "line 1"));
  t2t::write_file_atomic(dir / "short.tsv", "我\n");
  r = run_command(t.decoder(kDecode + " --decode_from_file=" + in + " --constraints_file=" +
                            (dir / "short.tsv")));
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "--constraints_file=" + (dir / "short.tsv") + " has 1 records"));
  r = run_command(t.decoder(kDecode + " --prefix_file=" + (dir / "short.tsv")));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--prefix_file goes with --decode_from_file"));
  r = run_command(t.decoder(kDecode + " --decode_from_file=" + in + " --alignment_file=x"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--alignment_file needs --decode_hparams alignment"));
  // A server does not watch for newer checkpoints of an ensemble.
  r = run_command("./t2t-serve " + t.model_flags() + " --watch_checkpoints=5 --ensemble=" + t.run);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "an --ensemble is not reloaded"));
}
