// End-to-end tests of t2t-datagen: the real binary on small data, the
// offline path of each downloader, YAML and plugin problems, bad input.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "t2t/core/string_util.h"
#include "t2t/data/problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/subword_text_encoder.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

using t2t::test::write_lines;

namespace {



int64_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) ++n;
  return n;
}

int64_t count_records(const std::vector<std::string>& paths) {
  int64_t n = 0;
  for (const auto& p : paths) n += t2t::count_tfrecords(p);
  return n;
}

// Simple made-up parallel lines for problems that need a few hundred pairs.
std::vector<std::pair<std::string, std::string>> toy_pairs(int n) {
  static const char* en[] = {"I like tea", "you read books", "we eat rice", "they drink water",
                             "he plays football", "she writes letters"};
  static const char* zh[] = {"我喜欢茶", "你看书", "我们吃米饭", "他们喝水", "他踢足球", "她写信"};
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < n; ++i)
    out.push_back({std::string(en[i % 6]) + " " + std::to_string(i) + ".",
                   std::string(zh[i % 6]) + std::to_string(i) + "。"});
  return out;
}

void write_pairs(const std::string& en_path, const std::string& zh_path, int n) {
  std::vector<std::string> en, zh;
  for (auto& [e, z] : toy_pairs(n)) en.push_back(e), zh.push_back(z);
  write_lines(en_path, en);
  write_lines(zh_path, zh);
}

}  // namespace

TEST_CASE("datagen writes the bundled sample, inspects it and skips on re-run", "[datagen][e2e]") {
  TempDir dir("datagen_sample");
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data +
                       " --tmp_dir=" + (dir / "tmp"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto problem = t2t::create_problem("translate_enzh_sample");
  auto train = problem->data_filepaths(data, "train");
  auto dev = problem->data_filepaths(data, "dev");
  REQUIRE(train.size() == 2);
  CHECK(fs::path(train[0]).filename() == "translate_enzh_sample-train-00000-of-00002");
  CHECK(fs::path(dev[0]).filename() == "translate_enzh_sample-dev-00000-of-00001");
  const std::string sample = t2t::test::source_dir() + "/data/sample/";
  CHECK(count_records(train) == count_lines(sample + "train.en"));
  CHECK(count_records(dev) == count_lines(sample + "dev.en"));
  // No temporary or unshuffled files are left behind.
  for (const auto& e : fs::directory_iterator(data))
    CHECK(e.path().string().find(".tmp") == std::string::npos);

  // Records hold EOS-terminated ids that decode back to the text.
  auto enc = problem->feature_encoders(data);
  CHECK_FALSE(enc.shared);
  t2t::TFRecordReader reader(dev[0]);
  std::string record;
  REQUIRE(reader.next(&record));
  auto features = t2t::parse_example(record);
  REQUIRE(features.count("inputs"));
  REQUIRE(features.count("targets"));
  CHECK(features["inputs"].back() == t2t::kEosId);
  CHECK(features["targets"].back() == t2t::kEosId);
  std::vector<int64_t> src(features["inputs"].begin(), features["inputs"].end() - 1);
  CHECK_FALSE(enc.inputs->decode(src).empty());

  // _rev swaps the features' encoders and reads the same files.
  auto rev = t2t::create_problem("translate_enzh_sample_rev");
  auto rev_enc = rev->feature_encoders(data);
  CHECK(rev_enc.inputs->vocab_size() == enc.targets->vocab_size());
  CHECK(rev->data_filepaths(data, "train") == train);

  auto inspect = run_command("./t2t-datagen --inspect=" + dev[0] +
                             " --problem=translate_enzh_sample --data_dir=" + data);
  INFO(inspect.output);
  CHECK(inspect.exit_code == 0);
  CHECK_THAT(inspect.output, Catch::Contains("examples"));
  CHECK_THAT(inspect.output, Catch::Contains("inputs text:"));
  CHECK_THAT(inspect.output, Catch::Contains("targets length"));

  auto again = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("using the existing sentencepiece vocabularies"));
  CHECK_THAT(again.output, Catch::Contains("all 2 shards exist, skipping"));
}

TEST_CASE("inspect reports a corrupt shard with its byte offset", "[datagen][e2e]") {
  TempDir dir("datagen_corrupt");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data)
              .exit_code == 0);
  const std::string shard = data + "/translate_enzh_sample-dev-00000-of-00001";
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  auto r = run_command("./t2t-datagen --inspect=" + shard);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains(shard));
  CHECK_THAT(r.output, Catch::Contains("byte offset"));
}

TEST_CASE("YAML problems register through --t2t_usr_dir and count bad input", "[datagen][e2e]") {
  TempDir dir("datagen_yaml");
  std::vector<std::string> en, zh;
  for (auto& [e, z] : toy_pairs(300)) en.push_back(e), zh.push_back(z);
  en.push_back("");                      // empty source
  zh.push_back("空的");
  en.push_back("bad \xff\xfe bytes");    // invalid UTF-8
  zh.push_back("坏的");
  en.push_back(std::string(300, 'x'));   // over max_line_bytes
  zh.push_back("长的");
  write_lines(dir / "corpus/train.en", en);
  write_lines(dir / "corpus/train.zh", zh);
  write_pairs(dir / "corpus/dev.en", dir / "corpus/dev.zh", 20);
  write_lines(dir / "usr/my_enzh.yaml",
              {"name: my_enzh", "description: a test problem", "source_language: en",
               "target_language: zh", "train: {source: ../corpus/train.en, target: ../corpus/train.zh}",
               "dev: {source: ../corpus/dev.en, target: ../corpus/dev.zh}",
               "vocab: {type: byte}", "shards: {train: 3, dev: 1}", "max_line_bytes: 200"});
  const std::string data = dir / "data";
  auto help = run_command("./t2t-datagen --t2t_usr_dir=" + (dir / "usr") + " --registry_help");
  INFO(help.output);
  CHECK_THAT(help.output, Catch::Contains("my_enzh"));
  CHECK_THAT(help.output, Catch::Contains("a test problem"));

  auto r = run_command("./t2t-datagen --t2t_usr_dir=" + (dir / "usr") +
                       " --problem=my_enzh --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("300 of 303 pairs kept"));
  CHECK_THAT(r.output, Catch::Contains("1 with an empty side"));
  CHECK_THAT(r.output, Catch::Contains("1 with invalid UTF-8"));
  CHECK_THAT(r.output, Catch::Contains("1 over the length limit"));
  int64_t n = 0;
  for (int i = 0; i < 3; ++i)
    n += t2t::count_tfrecords(data + "/my_enzh-train-0000" + std::to_string(i) + "-of-00003");
  CHECK(n == 300);

  // A declaration with a typo is an error naming the file and the key.
  write_lines(dir / "bad/bad.yaml", {"name: bad_problem", "trian: {source: a, target: b}"});
  auto bad = run_command("./t2t-datagen --t2t_usr_dir=" + (dir / "bad") + " --registry_help");
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("bad.yaml"));
  CHECK_THAT(bad.output, Catch::Contains("unknown key 'trian' (did you mean train?)"));
}

TEST_CASE("parallel files of different lengths are a clear error", "[datagen][e2e]") {
  TempDir dir("datagen_mismatch");
  write_pairs(dir / "train.en", dir / "train.zh", 10);
  write_lines(dir / "train.zh", {"只有一行"});
  write_lines(dir / "usr/p.yaml", {"name: mismatch_problem", "train: {source: ../train.en, target: ../train.zh}",
                                   "vocab: {type: byte}"});
  auto r = run_command("./t2t-datagen --t2t_usr_dir=" + (dir / "usr") +
                       " --problem=mismatch_problem --data_dir=" + (dir / "data"));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("parallel files differ in length"));
  CHECK_THAT(r.output, Catch::Contains("train.zh' ends after 1 lines"));
  // Nothing that looks like a finished shard, and no temporary file, is left.
  CHECK_FALSE(fs::exists(dir / "data/mismatch_problem-train-00000-of-00010"));
  for (const auto& e : fs::directory_iterator(dir / "data"))
    CHECK(e.path().string().find(".tmp") == std::string::npos);

}

TEST_CASE("protobuf's own implementation reads our shards and we read its", "[datagen][e2e]") {
  const std::string python = T2T_TEST_PYTHON;
  const std::string script = t2t::test::source_dir() + "/tests/python/tfrecord_crosscheck.py";
  const std::string env = "PYTHONPATH='" T2T_TEST_PROTO_DIR "' ";
  if (python.empty() ||
      run_command(env + "'" + python + "' -c 'import google.protobuf, example_pb2'").exit_code != 0)
    T2T_SKIP("no Python with the protobuf package (tools/setup.sh installs one)");
  TempDir dir("crosscheck");
  const std::string data = dir / "data";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data)
              .exit_code == 0);
  const std::string shard = data + "/translate_enzh_sample-dev-00000-of-00001";
  auto r = run_command(env + "'" + python + "' " + script + " read " + shard);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("records " + std::to_string(t2t::count_tfrecords(shard))));

  const std::string theirs = dir / "theirs.tfrecord";
  auto w = run_command(env + "'" + python + "' " + script + " write " + theirs);
  INFO(w.output);
  REQUIRE(w.exit_code == 0);
  t2t::TFRecordReader reader(theirs);
  std::string record;
  std::vector<t2t::Int64Features> read;
  while (reader.next(&record)) read.push_back(t2t::parse_example(record));
  REQUIRE(read.size() == 4);
  CHECK(read[0]["inputs"] == std::vector<int64_t>{5, 7, 300, 1});
  CHECK(read[2]["targets"] == std::vector<int64_t>{9, 1});
  CHECK(read[3]["inputs"] == std::vector<int64_t>{4, 1});  // the unpacked list
}

TEST_CASE("T2T subword vocabularies already in data_dir are used as they are", "[datagen][e2e]") {
  TempDir dir("datagen_t2t_vocab");
  const std::string data = dir / "data";
  fs::create_directories(data);
  const std::string sample = t2t::test::source_dir() + "/data/sample/";
  for (const std::string lang : {"en", "zh"}) {
    std::ifstream in(sample + "train." + lang);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    t2t::SubwordTextEncoder::build_from_corpus(lines, 600)
        .store_to_file(data + "/vocab.translate_enzh_sample.1024.subwords." + lang);
  }
  auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("using the existing subword vocabularies"));
  CHECK_FALSE(fs::exists(data + "/vocab.translate_enzh_sample.1024.spm.en.model"));
  auto enc = t2t::create_problem("translate_enzh_sample")->feature_encoders(data);
  auto* en = dynamic_cast<t2t::SubwordTextEncoder*>(enc.inputs.get());
  REQUIRE(en != nullptr);
  auto en_file = t2t::SubwordTextEncoder::load(data + "/vocab.translate_enzh_sample.1024.subwords.en");
  t2t::TFRecordReader reader(data + "/translate_enzh_sample-dev-00000-of-00001");
  std::string record;
  REQUIRE(reader.next(&record));
  auto inputs = t2t::parse_example(record)["inputs"];
  std::vector<int64_t> ids(inputs.begin(), inputs.end() - 1);
  std::vector<int64_t> again = en_file.encode(en_file.decode(ids));
  CHECK(again == ids);
}

TEST_CASE("the shipped YAML problem in configs/problems generates", "[datagen][e2e]") {
  TempDir dir("datagen_config_problem");
  const std::string yaml = t2t::test::source_dir() + "/configs/problems/sample_bpe.yaml";
  auto r = run_command("./t2t-datagen --t2t_usr_dir=" + yaml +
                       " --problem=translate_enzh_sample_bpe --data_dir=" + (dir / "data"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "data/vocab.translate_enzh_sample_bpe.2000.spm.model"));
  CHECK(t2t::count_tfrecords(dir / "data/translate_enzh_sample_bpe-dev-00000-of-00001") ==
        count_lines(t2t::test::source_dir() + "/data/sample/dev.en"));
}
