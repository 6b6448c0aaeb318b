// translate_enzh_tatoeba on an archive laid out as manythings.org's real
// cmn-eng.zip: cmn.txt (English TAB Chinese TAB CC-BY attribution) beside
// _about.txt, placed in --tmp_dir so that nothing is downloaded.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "t2t/data/problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

const char* kEn[] = {"I am hungry.", "Where is the station?", "It is raining today.",
                     "She reads every night.", "We will meet tomorrow."};
const char* kZh[] = {"我饿了。", "车站在哪里？", "今天下雨了。", "她每天晚上看书。", "我们明天见。"};

// cmn.txt as the real archive has it: English, Chinese, then the licence and
// the two sentences' Tatoeba numbers and owners. Every English sentence has
// two translations, as many in Tatoeba do.
std::string cmn_txt(int n, std::multimap<std::string, std::string>* pairs) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    const std::string en = std::string(kEn[i / 2 % 5]) + " (" + std::to_string(i / 2) + ")";
    const std::string zh = kZh[i / 2 % 5] + std::to_string(i);
    pairs->insert({en, zh});
    text += en + "\t" + zh + "\tCC-BY 2.0 (France) Attribution: tatoeba.org #" +
            std::to_string(1277 + i) + " (CK) & #" + std::to_string(1397 + i) + " (Martha)\n";
  }
  return text;
}

}  // namespace

TEST_CASE("translate_enzh_tatoeba reads the real cmn-eng.zip layout offline, attribution dropped",
          "[datagen][e2e][tatoeba_zip]") {
  TempDir dir("tatoeba_zip");
  const std::string stage = dir / "stage", tmp = dir / "tmp", data = dir / "data";
  fs::create_directories(stage);
  fs::create_directories(tmp);
  std::multimap<std::string, std::string> pairs;
  std::ofstream(stage + "/cmn.txt", std::ios::binary) << cmn_txt(600, &pairs);
  std::ofstream(stage + "/_about.txt", std::ios::binary)
      << "** Info **\n\nCheck for newer versions at:\nhttp://www.manythings.org/anki/\n\n"
         "** Terms of Use **\n\nSee the terms of use at https://tatoeba.org/eng/terms_of_use\n";
  REQUIRE(std::system(("cd '" + stage + "' && python3 -c \"import zipfile; "
                       "z = zipfile.ZipFile('" + tmp + "/cmn-eng.zip', 'w', zipfile.ZIP_DEFLATED); "
                       "z.write('cmn.txt'); z.write('_about.txt'); z.close()\"").c_str()) == 0);

  auto r = run_command("./t2t-datagen --problem=translate_enzh_tatoeba --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Contains("Downloading"));
  CHECK_THAT(r.output, Catch::Contains("Extracting " + tmp + "/cmn-eng.zip"));

  auto problem = t2t::create_problem("translate_enzh_tatoeba");
  auto enc = problem->feature_encoders(data);
  std::map<std::string, std::set<std::string>> side;  // English sentence -> splits it is in
  int64_t seen = 0;
  for (const std::string split : {"train", "dev"}) {
    const auto paths = problem->data_filepaths(data, split);
    CHECK(paths.size() == (split == "train" ? 10u : 1u));
    int64_t count = 0;
    for (const auto& path : paths) {
      REQUIRE(fs::exists(path));
      t2t::TFRecordReader reader(path);
      std::string record;
      while (reader.next(&record)) {
        auto f = t2t::parse_example(record);
        const std::string en = enc.inputs->decode({f["inputs"].begin(), f["inputs"].end() - 1});
        const std::string zh = enc.targets->decode({f["targets"].begin(), f["targets"].end() - 1});
        INFO(en << " | " << zh);
        // The Chinese column exactly: no attribution, no tab.
        auto [lo, hi] = pairs.equal_range(en);
        CHECK(std::any_of(lo, hi, [&](const auto& p) { return p.second == zh; }));
        CHECK(zh.find("CC-BY") == std::string::npos);
        CHECK(zh.find("tatoeba.org") == std::string::npos);
        side[en].insert(split);
        ++count;
      }
    }
    CHECK(count > 0);
    seen += count;
  }
  CHECK(seen == 600);
  // Both translations of an English sentence land in the same split.
  for (const auto& [en, splits] : side) CHECK(splits.size() == 1);
  // _about.txt came out of the archive too, and was not read as data.
  CHECK(fs::exists(tmp + "/_about.txt"));
}
