// translate_enzh_wmt32k's full training data, offline: News Commentary and
// newsdev2017 placed in tmp_dir as if downloaded, and small archives with
// the names and layouts of CWMT's cwmt.tgz and the UN corpus's
// UNv1.0.en-zh.tar.gz, which users download by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "t2t/data/problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

using t2t::test::write_lines;

namespace {


// `n` pairs tagged with `tag` so that each corpus's pairs can be told apart;
// with `blank_every` > 0, every blank_every-th Chinese line is empty.
void write_corpus(const std::string& en_path, const std::string& zh_path, const std::string& tag,
                  int n, int blank_every = 0) {
  std::vector<std::string> en, zh;
  for (int i = 0; i < n; ++i) {
    en.push_back("The " + tag + " report number " + std::to_string(i) + " was read.");
    zh.push_back(blank_every > 0 && i % blank_every == blank_every - 1
                     ? ""
                     : tag + "报告第" + std::to_string(i) + "号已读。");
  }
  write_lines(en_path, en);
  write_lines(zh_path, zh);
}

// News Commentary (kNcPairs) and newsdev2017 (kDevPairs), already extracted
// in tmp_dir as if downloaded, so that nothing touches the network.
constexpr int kNcPairs = 200, kDevPairs = 20;

void place_news_commentary(const std::string& tmp) {
  write_corpus(tmp + "/training-parallel-nc-v13/news-commentary-v13.zh-en.en",
               tmp + "/training-parallel-nc-v13/news-commentary-v13.zh-en.zh", "nc", kNcPairs);
  std::vector<std::string> en = {"<refset>", "<doc docid=\"d\">"}, zh = en;
  for (int i = 0; i < kDevPairs; ++i) {
    en.push_back("<seg id=\"" + std::to_string(i + 1) + "\">Dev sentence " + std::to_string(i) +
                 ".</seg>");
    zh.push_back("<seg id=\"" + std::to_string(i + 1) + "\">开发句子" + std::to_string(i) +
                 "。</seg>");
  }
  for (auto* v : {&en, &zh}) v->insert(v->end(), {"</doc>", "</refset>"});
  write_lines(tmp + "/dev/newsdev2017-enzh-src.en.sgm", en);
  write_lines(tmp + "/dev/newsdev2017-enzh-ref.zh.sgm", zh);
}

// The (en, zh) members of cwmt.tgz, as T2T names them.
std::vector<std::pair<std::string, std::string>> cwmt_members() {
  std::vector<std::pair<std::string, std::string>> m = {
      {"cwmt/casia2015/casia2015_en.txt", "cwmt/casia2015/casia2015_ch.txt"},
      {"cwmt/casict2015/casict2015_en.txt", "cwmt/casict2015/casict2015_ch.txt"},
      {"cwmt/neu2017/NEU_en.txt", "cwmt/neu2017/NEU_cn.txt"},
      {"cwmt/datum2015/datum_en.txt", "cwmt/datum2015/datum_ch.txt"}};
  for (int i = 1; i <= 20; ++i) {
    const std::string b = "cwmt/datum2017/Book" + std::to_string(i);
    m.push_back({b + "_en.txt", b + "_cn.txt"});
  }
  return m;
}

// 24 CWMT corpora of 5 lines (one with an empty Chinese side) = 96 pairs
// kept; UN: 50 lines, 10 of them with an empty side = 40 kept.
constexpr int kCwmtKept = 24 * 4, kUnKept = 40;

// Writes cwmt.tgz and UNv1.0.en-zh.tar.gz into tmp, built in `stage`; the
// member `leave_out` (if any) is not put in.
void place_archives(const std::string& stage, const std::string& tmp,
                    const std::string& leave_out = "") {
  for (const auto& [en, zh] : cwmt_members()) {
    const std::string tag = fs::path(en).parent_path().filename().string() + "-" +
                            fs::path(en).stem().string();
    write_corpus(stage + "/" + en, stage + "/" + zh, tag, 5, 5);
  }
  write_corpus(stage + "/en-zh/UNv1.0.en-zh.en", stage + "/en-zh/UNv1.0.en-zh.zh", "un", 50, 5);
  if (!leave_out.empty()) fs::remove(stage + "/" + leave_out);
  fs::create_directories(tmp);
  REQUIRE(std::system(("cd '" + stage + "' && tar czf '" + tmp + "/cwmt.tgz' cwmt && tar czf '" +
                       tmp + "/UNv1.0.en-zh.tar.gz' en-zh")
                          .c_str()) == 0);
}

// The source sentences of every example of `split`, decoded.
std::multiset<std::string> sources(const std::string& data, const std::string& problem,
                                   const std::string& split) {
  auto p = t2t::create_problem(problem);
  auto enc = p->feature_encoders(data);
  std::multiset<std::string> out;
  for (const auto& path : p->data_filepaths(data, split)) {
    t2t::TFRecordReader reader(path);
    std::string record;
    while (reader.next(&record)) {
      auto ids = t2t::parse_example(record)["inputs"];
      out.insert(enc.inputs->decode(std::vector<int64_t>(ids.begin(), ids.end() - 1)));
    }
  }
  return out;
}

size_t count_with(const std::multiset<std::string>& s, const std::string& part) {
  return std::count_if(s.begin(), s.end(),
                       [&](const std::string& x) { return x.find(part) != std::string::npos; });
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string datagen(const std::string& problem, const std::string& data, const std::string& tmp) {
  return "./t2t-datagen --problem=" + problem + " --data_dir=" + data + " --tmp_dir=" + tmp;
}

}  // namespace

TEST_CASE("translate_enzh_wmt32k without CWMT and UN trains on News Commentary and says so once",
          "[datagen][e2e][wmt_full]") {
  TempDir dir("wmt_nc_only");
  const std::string tmp = dir / "tmp", data = dir / "data";
  place_news_commentary(tmp);
  auto r = run_command(datagen("translate_enzh_wmt32k", data, tmp));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Contains("Downloading"));
  const std::string said = "training without CWMT (" + tmp + "/cwmt.tgz";
  CHECK(occurrences(r.output, said) == 1);
  CHECK(occurrences(r.output, "UN v1.0 (" + tmp + "/UNv1.0.en-zh.tar.gz") == 1);
  CHECK_THAT(r.output, Catch::Contains("http://nlp.nju.edu.cn/cwmt-wmt/"));
  CHECK_THAT(r.output, Catch::Contains("https://conferences.unite.un.org/UNCorpus"));
  auto train = sources(data, "translate_enzh_wmt32k", "train");
  CHECK(train.size() == kNcPairs);
  CHECK(sources(data, "translate_enzh_wmt32k", "dev").size() == kDevPairs);
}

TEST_CASE("translate_enzh_wmt32k appends CWMT and UN from their archives, wmt8k does not",
          "[datagen][e2e][wmt_full]") {
  TempDir dir("wmt_full");
  const std::string tmp = dir / "tmp", data = dir / "data";
  place_news_commentary(tmp);
  place_archives(dir / "stage", tmp);
  auto r = run_command(datagen("translate_enzh_wmt32k", data, tmp));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Contains("Downloading"));
  CHECK_THAT(r.output, !Catch::Contains("training without"));
  CHECK_THAT(r.output, Catch::Contains("adding CWMT (24 file pairs)"));
  CHECK_THAT(r.output, Catch::Contains("adding UN v1.0 (1 file pairs)"));
  // Every pair comes through, the empty ones dropped as T2T drops them.
  auto train = sources(data, "translate_enzh_wmt32k", "train");
  CHECK(train.size() == kNcPairs + kCwmtKept + kUnKept);
  CHECK(count_with(train, "The nc report") == kNcPairs);
  CHECK(count_with(train, "The un report") == kUnKept);
  CHECK(count_with(train, "The casia2015-casia2015_en report") == 4);
  CHECK(count_with(train, "The neu2017-NEU_en report") == 4);
  CHECK(count_with(train, "The datum2017-Book20_en report") == 4);
  CHECK(train.count("The datum2017-Book7_en report number 3 was read.") == 1);
  CHECK(train.count("The datum2017-Book7_en report number 4 was read.") == 0);  // empty zh side
  CHECK_THAT(r.output, Catch::Contains(std::to_string(kNcPairs + kCwmtKept + kUnKept) + " of " +
                                       std::to_string(kNcPairs + 24 * 5 + 50) + " pairs kept"));

  // Once extracted, the archives are not needed: the files are used as they are.
  fs::remove(tmp + "/cwmt.tgz");
  fs::remove(tmp + "/UNv1.0.en-zh.tar.gz");
  const std::string again = dir / "again";
  r = run_command(datagen("translate_enzh_wmt32k", again, tmp) + " --max_cases=250");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("adding CWMT (24 file pairs)"));
  CHECK_THAT(r.output, !Catch::Contains("Extracting"));
  // --max_cases caps each split: News Commentary first, then CWMT in order.
  train = sources(again, "translate_enzh_wmt32k", "train");
  CHECK(train.size() == 250);
  CHECK(count_with(train, "The nc report") == kNcPairs);
  CHECK(count_with(train, "The casia2015-casia2015_en report") == 4);
  CHECK(count_with(train, "The un report") == 0);
  CHECK(sources(again, "translate_enzh_wmt32k", "dev").size() == kDevPairs);

  // T2T's 8k problem stays on News Commentary.
  const std::string small = dir / "small";
  r = run_command(datagen("translate_enzh_wmt8k", small, tmp));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Contains("CWMT"));
  CHECK(sources(small, "translate_enzh_wmt8k", "train").size() == kNcPairs);
}

TEST_CASE("a CWMT archive without one of its files is an error naming both",
          "[datagen][e2e][wmt_full]") {
  TempDir dir("wmt_missing_member");
  const std::string tmp = dir / "tmp", data = dir / "data";
  place_news_commentary(tmp);
  place_archives(dir / "stage", tmp, "cwmt/datum2017/Book7_cn.txt");
  auto r = run_command(datagen("translate_enzh_wmt32k", data, tmp));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("'" + tmp + "/cwmt.tgz' has no file "
                                       "'cwmt/datum2017/Book7_cn.txt'"));
  CHECK_FALSE(fs::exists(data + "/translate_enzh_wmt32k-train-00000-of-00100"));

  // Extracted files without their archive, one of them missing: the same.
  TempDir half("wmt_partial");
  const std::string tmp2 = half / "tmp";
  place_news_commentary(tmp2);
  write_corpus(tmp2 + "/en-zh/UNv1.0.en-zh.en", tmp2 + "/en-zh/UNv1.0.en-zh.zh", "un", 5);
  fs::remove(tmp2 + "/en-zh/UNv1.0.en-zh.zh");
  r = run_command(datagen("translate_enzh_wmt32k", half / "data", tmp2));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("UN v1.0 is only partly in '" + tmp2 + "': '" + tmp2 +
                                       "/en-zh/UNv1.0.en-zh.zh' is missing"));
}
