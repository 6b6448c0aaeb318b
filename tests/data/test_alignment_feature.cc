// Word alignments on their way into the training shards: a Pharaoh file
// read alongside the raw pairs (AlignedStream), carried to tokens
// (token_alignment), written by t2t-datagen and batched by the reader.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/data/alignment_feature.h"
#include "t2t/data/batch_reader.h"
#include "t2t/data/problem.h"
#include "t2t/data/samples.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/alignment_words.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;
using t2t::test::write_lines;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;
using Ids = std::vector<int64_t>;

namespace {

// Decodes "½" as "1/2": a vocabulary that normalises text into more words.
class Normalising : public t2t::ByteTextEncoder {
 public:
  std::string decode(const std::vector<int64_t>& ids) const override {
    std::string s = t2t::ByteTextEncoder::decode(ids);
    const std::string half = "\xC2\xBD";
    for (size_t p; (p = s.find(half)) != std::string::npos;) s.replace(p, half.size(), "1/2");
    return s;
  }
};

}  // namespace

TEST_CASE("token_alignment links every token of two aligned words", "[alignment_feature]") {
  const t2t::ByteTextEncoder bytes;
  // Source words "hi" (bytes 0-1) and "you" (3-5; byte 2 is the space);
  // target "你" and "好", three bytes each: a character's last byte owns it.
  // Source EOS is position 6, target EOS 6.
  const std::string source = "hi you", target = "你好";
  const Ids src = bytes.encode(source), tgt = bytes.encode(target);
  const auto links = t2t::token_alignment(bytes, source, src, bytes, target, tgt,
                                          Pairs{{0, 1}, {1, 0}}, "a.txt line 1");
  REQUIRE(links);
  CHECK(*links == Ids{0, 5, 1, 5, 3, 2, 4, 2, 5, 2, 6, 6});  // EOS with EOS
  // Repeated pairs give each link once; a word left unaligned ("好", byte 5)
  // is linked to the source's EOS; no pairs, no links.
  CHECK(*t2t::token_alignment(bytes, source, src, bytes, target, tgt, Pairs{{0, 0}, {0, 0}}, "x") ==
        Ids{0, 2, 1, 2, 6, 5, 6, 6});
  CHECK(t2t::token_alignment(bytes, source, src, bytes, target, tgt, Pairs{}, "x")->empty());
}

TEST_CASE("token_alignment refuses words the text lacks and skips normalised text",
          "[alignment_feature]") {
  const t2t::ByteTextEncoder bytes;
  const std::string source = "hi you", target = "你好";
  const Ids src = bytes.encode(source), tgt = bytes.encode(target);
  try {
    t2t::token_alignment(bytes, source, src, bytes, target, tgt, Pairs{{2, 0}}, "a.txt line 7");
    FAIL("no error");
  } catch (const t2t::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("a.txt line 7") && Catch::Contains("source word 2 of 2") &&
                             Catch::Contains("t2t.alignment_words"));
  }
  CHECK_THROWS_WITH(
      t2t::token_alignment(bytes, source, src, bytes, target, tgt, Pairs{{0, 2}}, "b"),
      Catch::Contains("target word 2 of 2"));
  // "½ cup" is two words, its decode "1/2 cup" four: no links can be placed.
  const Normalising normalising;
  const std::string half = "\xC2\xBD cup";
  CHECK_FALSE(t2t::token_alignment(normalising, half, normalising.encode(half), bytes, target, tgt,
                                   Pairs{{0, 0}}, "c"));
}

TEST_CASE("AlignedStream reads a Pharaoh line per raw pair and names the file when short",
          "[alignment_feature]") {
  TempDir dir("aligned_stream");
  write_lines(dir / "a.txt", {"0-0 1-1", "", "0-1"});
  std::vector<t2t::TextPair> pairs = {{"a b", "x y"}, {"c", "z"}, {"d e", "w"}};
  t2t::AlignedStream stream(std::make_unique<t2t::VectorStream>(pairs), dir / "a.txt");
  t2t::TextPair p;
  REQUIRE(stream.next(&p));
  CHECK(p.aligned);
  CHECK(p.alignment == Pairs{{0, 0}, {1, 1}});
  REQUIRE(stream.next(&p));
  CHECK(p.alignment.empty());
  REQUIRE(stream.next(&p));
  CHECK(p.alignment == Pairs{{0, 1}});
  CHECK(p.alignment_where == "alignment file '" + (dir / "a.txt") + "' line 3");
  CHECK_FALSE(stream.next(&p));

  pairs.push_back({"f", "v"});
  t2t::AlignedStream longer(std::make_unique<t2t::VectorStream>(pairs), dir / "a.txt");
  for (int i = 0; i < 3; ++i) REQUIRE(longer.next(&p));
  CHECK_THROWS_WITH(longer.next(&p), Catch::Contains("has only 3 lines") &&
                                         Catch::Contains(dir / "a.txt"));

  write_lines(dir / "bad.txt", {"0-0", "1:2"});
  t2t::AlignedStream bad(std::make_unique<t2t::VectorStream>(pairs), dir / "bad.txt");
  REQUIRE(bad.next(&p));
  CHECK_THROWS_WITH(bad.next(&p), Catch::Contains("line 2") && Catch::Contains("'1:2'"));
  CHECK_THROWS_AS(t2t::AlignedStream(std::make_unique<t2t::VectorStream>(pairs), dir / "none.txt"),
                  t2t::OptionError);
}

TEST_CASE("t2t-datagen writes alignments into the training shards and the reader batches them",
          "[alignment_feature][datagen][e2e]") {
  TempDir dir("datagen_alignments");
  const std::string sample = t2t::test::source_dir() + "/data/sample/";
  const auto lines = static_cast<int64_t>(t2t::test::read_lines(sample + "train.en").size());
  // Each pair's first words aligned, and its last ones.
  std::vector<std::string> align;
  {
    std::ifstream en(sample + "train.en"), zh(sample + "train.zh");
    std::string e, z;
    while (std::getline(en, e) && std::getline(zh, z))
      align.push_back("0-0 " + std::to_string(t2t::alignment_words(e).size() - 1) + "-" +
                      std::to_string(t2t::alignment_words(z).size() - 1));
  }
  REQUIRE(static_cast<int64_t>(align.size()) == lines);
  write_lines(dir / "train.align", align);
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data +
                       " --train_alignments=" + (dir / "train.align"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("word alignments from"));

  auto problem = t2t::create_problem("translate_enzh_sample");
  const auto train = problem->data_filepaths(data, "train");
  int64_t with_links = 0, records = 0;
  for (const auto& path : train) {
    t2t::TFRecordReader reader(path);
    std::string record;
    while (reader.next(&record)) {
      auto f = t2t::parse_example(record);
      ++records;
      REQUIRE(f.count("alignment"));
      const auto& a = f["alignment"];
      REQUIRE(a.size() % 2 == 0);
      with_links += !a.empty();
      // Within the features; a target token links to the source's EOS
      // only where its word has no link (here: the words between the first
      // and the last), and the target's EOS does.
      const auto in_len = static_cast<int64_t>(f["inputs"].size());
      const auto out_len = static_cast<int64_t>(f["targets"].size());
      bool eos_linked = false;
      for (size_t k = 0; k < a.size(); k += 2) {
        CHECK(a[k] < in_len);
        CHECK(a[k + 1] < out_len);
        if (a[k + 1] == out_len - 1) {
          CHECK(a[k] == in_len - 1);
          eos_linked = true;
        }
        if (a[k] == in_len - 1) CHECK(a[k + 1] > 0);  // word 0 is aligned
      }
      CHECK(eos_linked);
    }
  }
  CHECK(records == lines);
  CHECK(with_links == records);
  // The dev split has none.
  {
    t2t::TFRecordReader reader(problem->data_filepaths(data, "dev")[0]);
    std::string record;
    REQUIRE(reader.next(&record));
    CHECK(t2t::parse_example(record).count("alignment") == 0);
  }

  // The reader batches them as (row, target, input), swapped for _rev.
  t2t::BatchingScheme scheme = t2t::batching_scheme(256, 64);
  for (bool reversed : {false, true}) {
    t2t::ReaderOptions options;
    options.seed = 3;
    options.reversed = reversed;
    t2t::BatchReader reader(train, scheme, options);
    const auto batch = reader.next();
    REQUIRE(batch);
    REQUIRE(batch->alignment.defined());
    REQUIRE(batch->alignment.size(1) == 3);
    REQUIRE(batch->alignment.size(0) > 0);
    const auto a = batch->alignment;
    CHECK(a.select(1, 0).max().item<int64_t>() < batch->size());
    // Every link points at tokens of its row (EOS is 1), never at padding;
    // reversed, no target EOS is tied to an input word (the data's NULL
    // links are its source EOS's).
    for (int64_t k = 0; k < a.size(0); ++k) {
      const int64_t row = a[k][0].item<int64_t>();
      const int64_t target = batch->targets[row][a[k][1]].item<int64_t>();
      const int64_t input = batch->inputs[row][a[k][2]].item<int64_t>();
      CHECK(target >= 1);
      CHECK(input >= 1);
      if (reversed && target == t2t::kEosId) CHECK(input == t2t::kEosId);
    }
  }

  // Existing shards without alignments are never silently kept.
  const std::string plain = dir / "plain";
  REQUIRE(run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + plain)
              .exit_code == 0);
  auto again = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + plain +
                           " --train_alignments=" + (dir / "train.align"));
  CHECK(again.exit_code != 0);
  CHECK_THAT(again.output, Catch::Contains("without word alignments") &&
                               Catch::Contains("--train_alignments"));

  // A file of the wrong length names itself.
  align.pop_back();
  write_lines(dir / "short.align", align);
  auto shorter = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" +
                             (dir / "short") + " --train_alignments=" + (dir / "short.align"));
  CHECK(shorter.exit_code != 0);
  CHECK_THAT(shorter.output, Catch::Contains("short.align") && Catch::Contains("has only"));
}
