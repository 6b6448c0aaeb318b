// The shipped problems' raw-data paths, offline: archives placed in tmp_dir
// are used without touching the network; the real Tatoeba data in
// ../shared/data where present; and a C++ plugin built and loaded.
#include <catch2/catch.hpp>

#include <filesystem>

#include "t2t/data/problem.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/datagen_test_util.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::records;
using t2t::test::TempDir;
using t2t::test::write_text;

namespace {

const char* kEn[] = {"The economy grew", "Prices fell sharply", "The bank raised rates",
                     "Trade talks resumed", "Exports rose again"};
const char* kZh[] = {"经济增长了", "价格大幅下跌", "银行提高了利率", "贸易谈判恢复了", "出口再次上升"};

}  // namespace

TEST_CASE("translate_enzh_wmt8k reads archives already in tmp_dir", "[datagen][e2e][offline]") {
  TempDir dir("wmt_offline");
  const std::string raw = dir / "raw";
  std::string en, zh, sgm_en = "<refset>\n<doc docid=\"d1\">\n", sgm_zh = sgm_en;
  for (int i = 0; i < 400; ++i) {
    en += std::string(kEn[i % 5]) + " in year " + std::to_string(1900 + i) + ".\n";
    zh += std::to_string(1900 + i) + "年" + kZh[i % 5] + "。\n";
  }
  for (int i = 0; i < 30; ++i) {
    sgm_en += "<seg id=\"" + std::to_string(i + 1) + "\">" + kEn[i % 5] + " today.</seg>\n";
    sgm_zh += "<seg id=\"" + std::to_string(i + 1) + "\">今天" + kZh[i % 5] + "。</seg>\n";
  }
  sgm_en += "</doc>\n</refset>\n";
  sgm_zh += "</doc>\n</refset>\n";
  write_text(raw + "/training-parallel-nc-v13/news-commentary-v13.zh-en.en", en);
  write_text(raw + "/training-parallel-nc-v13/news-commentary-v13.zh-en.zh", zh);
  write_text(raw + "/dev/newsdev2017-enzh-src.en.sgm", sgm_en);
  write_text(raw + "/dev/newsdev2017-enzh-ref.zh.sgm", sgm_zh);
  const std::string tmp = dir / "tmp";
  fs::create_directories(tmp);
  REQUIRE(std::system(("cd '" + raw + "' && tar czf '" + tmp +
                       "/training-parallel-nc-v13.tgz' training-parallel-nc-v13 && tar czf '" +
                       tmp + "/dev.tgz' dev").c_str()) == 0);
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_wmt8k --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(records(data, "translate_enzh_wmt8k", "train") == 400);
  CHECK(records(data, "translate_enzh_wmt8k", "dev") == 30);
  CHECK(fs::exists(data + "/translate_enzh_wmt8k-train-00009-of-00010"));
  CHECK_THAT(r.output, !Catch::Contains("Downloading "));
}

TEST_CASE("translate_enzh_tatoeba reads cmn-eng.zip from tmp_dir and splits it",
          "[datagen][e2e][offline]") {
  TempDir dir("tatoeba_offline");
  std::string cmn;
  for (int i = 0; i < 500; ++i)
    cmn += std::string(kEn[i % 5]) + " " + std::to_string(i) + ".\t" + kZh[i % 5] +
           std::to_string(i) + "。\tCC-BY 2.0 (France) Attribution: tatoeba.org #" +
           std::to_string(i) + "\n";
  write_text(dir / "raw/cmn.txt", cmn);
  const std::string tmp = dir / "tmp";
  fs::create_directories(tmp);
  REQUIRE(std::system(("cd '" + (dir / "raw") + "' && python3 -c \"import zipfile; "
                       "z=zipfile.ZipFile('" + tmp + "/cmn-eng.zip','w'); z.write('cmn.txt'); "
                       "z.close()\"").c_str()) == 0);
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_tatoeba --data_dir=" + data +
                       " --tmp_dir=" + tmp);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  int64_t train = records(data, "translate_enzh_tatoeba", "train");
  int64_t dev = records(data, "translate_enzh_tatoeba", "dev");
  CHECK(train + dev == 500);
  CHECK(dev > 0);
  CHECK(dev < 60);
}

TEST_CASE("translate_enzh_tatoeba on the real Tatoeba data", "[datagen][e2e][shared]") {
  const std::string shared = t2t::test::source_dir() + "/../shared/data/tatoeba-enzh";
  if (!fs::exists(shared + "/train.en"))
    T2T_SKIP(shared << " is absent (it exists in CI, not on a user's machine)");
  TempDir dir("tatoeba_real");
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_tatoeba --data_dir=" + data +
                       " --tmp_dir=" + shared);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(records(data, "translate_enzh_tatoeba", "train") == 24847);
  CHECK(records(data, "translate_enzh_tatoeba", "dev") == 1000);
  auto inspect = run_command("./t2t-datagen --inspect=" + data +
                             "/translate_enzh_tatoeba-dev-00000-of-00001 --inspect_examples=2"
                             " --problem=translate_enzh_tatoeba --data_dir=" + data);
  INFO(inspect.output);
  CHECK(inspect.exit_code == 0);
  CHECK_THAT(inspect.output, Catch::Contains("1000 examples"));
}

TEST_CASE("a C++ plugin registers a problem and an hparams set", "[datagen][e2e][plugin]") {
  TempDir dir("plugin");
  const std::string build = dir / "build";
  const std::string source = t2t::test::source_dir();
  const std::string configure = "cmake -S '" + source + "/problems/examples/plugin' -B '" + build +
                                "' -DT2T_ROOT='" + source + "' -DT2T_BUILD='" +
                                t2t::test::bin_dir() + "' -DCMAKE_BUILD_TYPE=Release";
  auto c = run_command(configure + " && cmake --build '" + build + "'");
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  auto help = run_command("./t2t-trainer --t2t_usr_dir=" + build + " --registry_help");
  INFO(help.output);
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.output, Catch::Contains("reverse_words"));
  CHECK_THAT(help.output, Catch::Contains("transformer_reverse_words"));
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --t2t_usr_dir=" + build +
                       " --problem=reverse_words --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(t2t::count_tfrecords(data + "/reverse_words-dev-00000-of-00001") == 50);
}
