// The disk space t2t-datagen reports before it writes: the estimate from
// the text's size, the peak with the temporary files, the verdict against
// the free space, and the line the real binary logs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "t2t/core/error.h"
#include "t2t/data/disk_space.h"
#include "t2t/data/problem.h"
#include "t2t/data/samples.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using t2t::test::run_command;
using t2t::test::TempDir;

TEST_CASE("the shards' size is estimated from the text and the peak counts temporary files",
          "[datagen][disk]") {
  const t2t::SplitSize train{"train", 100, 25'000'000, 9'000'000'000};
  const t2t::SplitSize dev{"dev", 1, 2'000, 700'000};
  const int64_t train_bytes = t2t::estimate_shard_bytes(train, false);
  const int64_t dev_bytes = t2t::estimate_shard_bytes(dev, false);
  // Learned vocabularies: well under the text's own size; bytes: above it.
  CHECK(train_bytes > 9'000'000'000 / 4);
  CHECK(train_bytes < 9'000'000'000);
  CHECK(t2t::estimate_shard_bytes(train, true) > 9'000'000'000);

  // Train (100 shards, 2 shuffled at a time) then dev (1 shard: its
  // unshuffled file and its shard side by side).
  const auto need = t2t::estimate_disk_need({train, dev}, false, 2);
  CHECK(need.text_bytes == 9'000'700'000);
  CHECK(need.final_bytes == train_bytes + dev_bytes);
  CHECK(need.peak_bytes == std::max(train_bytes + train_bytes * 2 / 100,
                                    train_bytes + 2 * dev_bytes));

  CHECK(t2t::judge_disk_space(100, 1000) == t2t::DiskVerdict::kEnough);
  CHECK(t2t::judge_disk_space(100, 150) == t2t::DiskVerdict::kEnough);
  CHECK(t2t::judge_disk_space(100, 149) == t2t::DiskVerdict::kClose);
  CHECK(t2t::judge_disk_space(100, 75) == t2t::DiskVerdict::kClose);
  CHECK(t2t::judge_disk_space(100, 74) == t2t::DiskVerdict::kShort);

  CHECK(t2t::human_bytes(300) == "300 B");
  CHECK(t2t::human_bytes(1536) == "1.5 KiB");
  CHECK(t2t::human_bytes(int64_t(820) << 20) == "820 MiB");
  CHECK(t2t::human_bytes(int64_t(5) << 40) == "5.0 TiB");

  // A filesystem far too small is refused before anything is written.
  TempDir dir("disk_check");
  const t2t::SplitSize huge{"train", 100, int64_t(1) << 40, int64_t(1) << 50};
  CHECK_THROWS_WITH(t2t::check_disk_space(dir / "data", {huge}, false, 2),
                    Catch::Contains("not enough disk space in data_dir '" + (dir / "data")) &&
                        Catch::Contains("max_cases"));
  CHECK_NOTHROW(t2t::check_disk_space(dir / "data", {dev}, false, 2));
}

TEST_CASE("streams tell how much text is still to come, and ConcatStream reads its parts in order",
          "[datagen][disk]") {
  TempDir dir("stream_bytes");
  std::ofstream(dir / "a.en") << "one\ntwo\n";
  std::ofstream(dir / "a.zh") << "一\n二\n";
  std::ofstream(dir / "b.tsv") << "three\t三\tCC-BY\n";
  std::vector<std::unique_ptr<t2t::SampleStream>> parts;
  parts.push_back(std::make_unique<t2t::ParallelTextReader>(dir / "a.en", dir / "a.zh"));
  parts.push_back(std::make_unique<t2t::VectorStream>(std::vector<t2t::TextPair>{{"four", "四"}}));
  parts.push_back(std::make_unique<t2t::TabSeparatedReader>(dir / "b.tsv"));
  t2t::ConcatStream all(std::move(parts));
  CHECK(all.text_bytes() == (8 + 8) + (4 + 3 + 2) + 16);
  std::vector<std::string> order;
  t2t::TextPair pair;
  while (all.next(&pair)) order.push_back(pair.source + "=" + pair.target);
  CHECK(order == std::vector<std::string>{"one=一", "two=二", "four=四", "three=三"});
  CHECK(all.text_bytes() == 0);

  // A split of a stream gets its share; a stream that cannot tell, -1.
  t2t::HashSplitStream dev(std::make_unique<t2t::TabSeparatedReader>(dir / "b.tsv"), true, 3);
  CHECK(dev.text_bytes() == 16 / 3);
  struct Unknown : t2t::SampleStream {
    bool next(t2t::TextPair*) override { return false; }
  };
  std::vector<std::unique_ptr<t2t::SampleStream>> some;
  some.push_back(std::make_unique<Unknown>());
  CHECK(t2t::ConcatStream(std::move(some)).text_bytes() == -1);
}

TEST_CASE("t2t-datagen reports the disk its shards will need, close to what they take",
          "[datagen][disk][e2e]") {
  TempDir dir("disk_report");
  const std::string data = dir / "data";
  auto r = run_command("./t2t-datagen --problem=translate_enzh_sample --data_dir=" + data);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m,
                            std::regex("disk: the shards need about ([0-9.]+) KiB .* free in")));
  const double estimate = std::stod(m[1]) * 1024;
  double actual = 0;
  auto problem = t2t::create_problem("translate_enzh_sample");
  for (const std::string split : {"train", "dev"})
    for (const auto& p : problem->data_filepaths(data, split)) actual += fs::file_size(p);
  CHECK(estimate > actual * 0.8);
  CHECK(estimate < actual * 1.5);
}
