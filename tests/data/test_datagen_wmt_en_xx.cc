// T2T's English-to-German, -French, -Czech and -Romanian WMT problems,
// offline: small archives in each corpus's real layout (as T2T 1.15's
// translate_en*.py reads them) placed in tmp_dir, then t2t-datagen, with
// the counts and the shared vocabulary checked; and a T2T data directory's
// vocabulary found by the problem's name.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "t2t/data/problem.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/datagen_test_util.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::run_command;
using t2t::test::records;
using t2t::test::TempDir;
using t2t::test::write_text;

namespace {

// `n` lines "<word> <i>." for a side of a corpus.
std::string lines(const std::string& word, int n, int from = 0) {
  std::string s;
  for (int i = from; i < from + n; ++i) s += word + " number " + std::to_string(i) + ".\n";
  return s;
}

// Packs `members` (relative to stage) into tmp/archive with tar (gzipped
// unless the name ends in .tar) or, for .zip, Python's zipfile.
void pack(const std::string& stage, const std::string& archive,
          const std::vector<std::string>& members) {
  std::string list;
  for (const auto& m : members) list += " '" + m + "'";
  std::string cmd;
  if (archive.size() > 4 && archive.compare(archive.size() - 4, 4, ".zip") == 0) {
    std::string py = "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],'w')\nfor m in sys.argv[2:]: z.write(m)\nz.close()";
    cmd = "cd '" + stage + "' && python3 -c \"" + py + "\" '" + archive + "'" + list;
  } else {
    const bool gz = archive.compare(archive.size() - 4, 4, ".tar") != 0;
    cmd = "cd '" + stage + "' && tar c" + std::string(gz ? "z" : "") + "f '" + archive + "'" + list;
  }
  REQUIRE(std::system(cmd.c_str()) == 0);
}

std::string sgm(const std::string& word, int n) {
  std::string s = "<refset>\n<doc docid=\"d\">\n";
  for (int i = 0; i < n; ++i)
    s += "<seg id=\"" + std::to_string(i + 1) + "\">" + word + " " + std::to_string(i) + ".</seg>\n";
  return s + "</doc>\n</refset>\n";
}

}  // namespace

TEST_CASE("translate_ende_wmt8k reads T2T's three corpora and newstest2013 from tmp_dir",
          "[datagen][e2e][offline]") {
  TempDir dir("wmt_ende");
  const std::string stage = dir / "stage", tmp = dir / "tmp";
  fs::create_directories(tmp);
  write_text(stage + "/training-parallel-nc-v13/news-commentary-v13.de-en.en", lines("news", 100));
  write_text(stage + "/training-parallel-nc-v13/news-commentary-v13.de-en.de", lines("Nachricht", 100));
  write_text(stage + "/commoncrawl.de-en.en", lines("crawl", 80));
  write_text(stage + "/commoncrawl.de-en.de", lines("Netz", 80));
  write_text(stage + "/training/europarl-v7.de-en.en", lines("parliament", 60) + "\n");
  write_text(stage + "/training/europarl-v7.de-en.de", lines("Parlament", 60) + "leer\n");
  write_text(stage + "/dev/newstest2013.en", lines("test", 30));
  write_text(stage + "/dev/newstest2013.de", lines("Test", 30));
  pack(stage, tmp + "/training-parallel-nc-v13.tgz", {"training-parallel-nc-v13"});
  pack(stage, tmp + "/training-parallel-commoncrawl.tgz", {"commoncrawl.de-en.en", "commoncrawl.de-en.de"});
  pack(stage, tmp + "/training-parallel-europarl-v7.tgz", {"training"});
  pack(stage, tmp + "/dev.tgz", {"dev"});
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_ende_wmt8k --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Contains("Downloading"));
  // The pair with an empty English side is dropped, as T2T drops it.
  CHECK(records(data, "translate_ende_wmt8k", "train") == 240);
  CHECK(records(data, "translate_ende_wmt8k", "dev") == 30);
  CHECK(fs::exists(data + "/translate_ende_wmt8k-train-00099-of-00100"));
  // One vocabulary for both languages.
  const auto enc = t2t::create_problem("translate_ende_wmt8k")->feature_encoders(data);
  CHECK(enc.shared);
  CHECK(enc.inputs->decode(enc.inputs->encode("Parlament number 7.")) == "Parlament number 7.");
}

TEST_CASE("translate_enro_wmt8k: Europarl's tgz, SETIMES's zip and newsdev2016's .sgm",
          "[datagen][e2e][offline]") {
  TempDir dir("wmt_enro");
  const std::string stage = dir / "stage", tmp = dir / "tmp";
  fs::create_directories(tmp);
  write_text(stage + "/europarl-v7.ro-en.en", lines("parliament", 70));
  write_text(stage + "/europarl-v7.ro-en.ro", lines("parlament", 70));
  write_text(stage + "/SETIMES.en-ro.en", lines("times", 50));
  write_text(stage + "/SETIMES.en-ro.ro", lines("vremuri", 50));
  write_text(stage + "/dev/newsdev2016-roen-ref.en.sgm", sgm("news", 25));
  write_text(stage + "/dev/newsdev2016-roen-src.ro.sgm", sgm("stiri", 25));
  pack(stage, tmp + "/ro-en.tgz", {"europarl-v7.ro-en.en", "europarl-v7.ro-en.ro"});
  pack(stage, tmp + "/en-ro.txt.zip", {"SETIMES.en-ro.en", "SETIMES.en-ro.ro"});
  pack(stage, tmp + "/dev-romanian-updated.tgz", {"dev"});
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enro_wmt8k --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(records(data, "translate_enro_wmt8k", "train") == 120);
  CHECK(records(data, "translate_enro_wmt8k", "dev") == 25);
}

TEST_CASE("translate_enfr_wmt32k: a .tar of .gz members among T2T's five corpora",
          "[datagen][e2e][offline]") {
  TempDir dir("wmt_enfr");
  const std::string stage = dir / "stage", tmp = dir / "tmp";
  fs::create_directories(tmp);
  write_text(stage + "/commoncrawl.fr-en.en", lines("crawl", 20));
  write_text(stage + "/commoncrawl.fr-en.fr", lines("toile", 20));
  write_text(stage + "/training/europarl-v7.fr-en.en", lines("parliament", 20));
  write_text(stage + "/training/europarl-v7.fr-en.fr", lines("parlement", 20));
  pack(stage, tmp + "/training-parallel-commoncrawl.tgz", {"commoncrawl.fr-en.en", "commoncrawl.fr-en.fr"});
  pack(stage, tmp + "/training-parallel-europarl-v7.tgz", {"training"});
  fs::remove_all(stage + "/training");
  write_text(stage + "/training/news-commentary-v9.fr-en.en", lines("news", 20));
  write_text(stage + "/training/news-commentary-v9.fr-en.fr", lines("nouvelles", 20));
  pack(stage, tmp + "/training-parallel-nc-v9.tgz", {"training"});
  write_text(stage + "/giga-fren.release2.fixed.en", lines("giga", 20));
  write_text(stage + "/giga-fren.release2.fixed.fr", lines("giga fr", 20));
  REQUIRE(std::system(("cd '" + stage + "' && gzip giga-fren.release2.fixed.en giga-fren.release2.fixed.fr").c_str()) == 0);
  pack(stage, tmp + "/training-giga-fren.tar", {"giga-fren.release2.fixed.en.gz", "giga-fren.release2.fixed.fr.gz"});
  write_text(stage + "/un/undoc.2000.fr-en.en", lines("nations", 20));
  write_text(stage + "/un/undoc.2000.fr-en.fr", lines("nations fr", 20));
  pack(stage, tmp + "/training-parallel-un.tgz", {"un"});
  write_text(stage + "/dev/newstest2013.en", lines("test", 10));
  write_text(stage + "/dev/newstest2013.fr", lines("essai", 10));
  pack(stage, tmp + "/dev.tgz", {"dev"});
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enfr_wmt32k --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(records(data, "translate_enfr_wmt32k", "train") == 100);
  CHECK(records(data, "translate_enfr_wmt32k", "dev") == 10);
}

TEST_CASE("translate_encs_wmt32k: CzEng's tab-separated columns beside three corpora",
          "[datagen][e2e][offline]") {
  TempDir dir("wmt_encs");
  const std::string stage = dir / "stage", tmp = dir / "tmp";
  fs::create_directories(tmp);
  // CzEng 1.6's plain-text format: id, score, Czech, English.
  std::string czeng;
  for (int i = 0; i < 40; ++i)
    czeng += "b-" + std::to_string(i) + "\t0.9\tceska veta " + std::to_string(i) +
             "\tenglish sentence " + std::to_string(i) + "\n";
  write_text(stage + "/data.plaintext-format/00train", czeng);
  REQUIRE(std::system(("cd '" + stage + "/data.plaintext-format' && gzip 00train").c_str()) == 0);
  pack(stage, tmp + "/data-plaintext-format.tar", {"data.plaintext-format"});
  write_text(stage + "/training-parallel-nc-v13/news-commentary-v13.cs-en.en", lines("news", 15));
  write_text(stage + "/training-parallel-nc-v13/news-commentary-v13.cs-en.cs", lines("zpravy", 15));
  pack(stage, tmp + "/training-parallel-nc-v13.tgz", {"training-parallel-nc-v13"});
  write_text(stage + "/commoncrawl.cs-en.en", lines("crawl", 15));
  write_text(stage + "/commoncrawl.cs-en.cs", lines("sit", 15));
  pack(stage, tmp + "/training-parallel-commoncrawl.tgz", {"commoncrawl.cs-en.en", "commoncrawl.cs-en.cs"});
  write_text(stage + "/training/europarl-v7.cs-en.en", lines("parliament", 15));
  write_text(stage + "/training/europarl-v7.cs-en.cs", lines("parlament", 15));
  pack(stage, tmp + "/training-parallel-europarl-v7.tgz", {"training"});
  write_text(stage + "/dev/newstest2013.en", lines("test", 10));
  write_text(stage + "/dev/newstest2013.cs", lines("zkouska", 10));
  pack(stage, tmp + "/dev.tgz", {"dev"});
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_encs_wmt32k --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(records(data, "translate_encs_wmt32k", "train") == 85);
  CHECK(records(data, "translate_encs_wmt32k", "dev") == 10);
}

TEST_CASE("T2T's WMT problems are registered under T2T's names", "[datagen]") {
  for (const char* name : {"translate_ende_wmt8k", "translate_ende_wmt32k",
                           "translate_enfr_wmt_small8k", "translate_enfr_wmt_small32k",
                           "translate_enfr_wmt8k", "translate_enfr_wmt32k",
                           "translate_encs_wmt32k", "translate_enro_wmt8k",
                           "translate_enro_wmt32k"}) {
    INFO(name);
    CHECK_NOTHROW(t2t::create_problem(name));
  }
  // A T2T data directory's shared subword vocabulary is found by name.
  TempDir dir("wmt_t2t_vocab");
  write_text(dir / "vocab.translate_ende_wmt32k.32768.subwords", "'<pad>'\n'<EOS>'\n'Haus_'\n'house_'\n");
  const auto enc = t2t::create_problem("translate_ende_wmt32k")->feature_encoders(dir.path.string());
  CHECK(enc.shared);
  CHECK(enc.inputs->vocab_size() == 4);
}
