// Training data in parts drawn by weight (data_mix.h, example_mix.h): the
// schedule's shares, the reader drawing each part in its proportion epoch
// after epoch, and exact resumption from a saved state.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/data/batch_reader.h"
#include "t2t/data/data_mix.h"
#include "t2t/data/problem.h"
#include "t2t/data/yaml_problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/batch_compare.h"
#include "tests/support/test_util.h"

using t2t::BatchReader;
using t2t::DataMix;
using t2t::MixSchedule;
using t2t::ReaderOptions;
using t2t::ReaderState;

namespace {

// `files` shards of part `tag` whose example i has first target id
// tag * 100000 + i, lengths 1..24.
std::vector<std::string> write_part(const t2t::test::TempDir& dir, int tag, int files,
                                    int per_file) {
  std::vector<std::string> paths;
  int64_t i = 0;
  for (int f = 0; f < files; ++f) {
    char name[64];
    std::snprintf(name, sizeof name, "mix-train-p%d-%05d-of-%05d", tag, f, files);
    paths.push_back(dir / name);
    t2t::TFRecordWriter w(paths.back());
    for (int r = 0; r < per_file; ++r, ++i) {
      std::vector<int64_t> inputs(static_cast<size_t>(1 + (i * 13) % 24), 7);
      std::vector<int64_t> targets(static_cast<size_t>(1 + (i * 7 + i / 5) % 24), 9);
      targets[0] = tag * 100000 + i;
      w.write(t2t::serialize_example({{"inputs", inputs}, {"targets", targets}}));
    }
    w.close();
  }
  return paths;
}

ReaderOptions training(uint64_t seed = 3) {
  ReaderOptions o;
  o.training = true;
  o.seed = seed;
  o.shuffle_buffer = 16;
  o.batch_shuffle = 4;
  o.prefetch = 2;
  return o;
}

}  // namespace

TEST_CASE("the mix schedule keeps every part within two examples of its share", "[data_mix]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> weight(0.01, 10.0);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t parts = 2 + static_cast<size_t>(trial % 7);
    std::vector<double> w;
    double total = 0;
    for (size_t i = 0; i < parts; ++i) total += w.emplace_back(weight(rng));
    MixSchedule schedule(w);
    double worst = 0;
    for (int n = 1; n <= 3000; ++n) {
      schedule.take(schedule.next());
      for (size_t i = 0; i < parts; ++i)
        worst = std::max(worst, std::abs(static_cast<double>(schedule.taken()[i]) -
                                         n * w[i] / total));
    }
    INFO(parts << " parts");
    CHECK(worst < 2.0);
    if (parts == 2) CHECK(worst <= 0.5 + 1e-9);
  }
  SECTION("equal weights take turns; 3:1 repeats a pattern of four") {
    MixSchedule even({1, 1});
    std::vector<size_t> order;
    for (int i = 0; i < 6; ++i) {
      order.push_back(even.next());
      even.take(order.back());
    }
    CHECK(order == std::vector<size_t>{0, 1, 0, 1, 0, 1});
    MixSchedule three({3, 1});
    std::vector<int64_t> counts(2, 0);
    for (int i = 0; i < 400; ++i) three.take(three.next());
    CHECK(three.taken() == std::vector<int64_t>{300, 100});
  }
  SECTION("bad weights and counts are refused") {
    CHECK_THROWS_AS(MixSchedule({}), t2t::Error);
    CHECK_THROWS_WITH(MixSchedule({1, 0}), Catch::Contains("> 0"));
    CHECK_THROWS_AS(MixSchedule({1, NAN}), t2t::Error);
    MixSchedule s({1, 2});
    CHECK_THROWS_WITH(s.restore({1}), Catch::Contains("2"));
    CHECK_THROWS_AS(s.restore({1, -1}), t2t::Error);
  }
}

TEST_CASE("training parts are checked where they are declared", "[data_mix]") {
  using t2t::TrainingPart;
  auto check = [](std::vector<TrainingPart> parts) {
    t2t::check_training_parts(parts, "problem p");
  };
  CHECK_NOTHROW(check({{"real", 1, 0, ""}, {"bt", 0.5, 0, "<BT>"}}));
  CHECK_NOTHROW(check({{"real", 1, 2, ""}, {"bt", 1, 1, ""}}));
  CHECK_THROWS_WITH(check({{"Real", 1, 0, ""}}), Catch::Contains("'Real'") &&
                                                    Catch::Contains("lower-case"));
  CHECK_THROWS_WITH(check({{"a", 1, 0, ""}, {"a", 1, 0, ""}}), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(check({{"a", 0, 0, ""}}), Catch::Contains("weight must be a number > 0"));
  CHECK_THROWS_WITH(check({{"a", -1, 0, ""}}), Catch::Contains("problem p"));
  CHECK_THROWS_WITH(check({{"a", 1, 2, ""}, {"b", 1, 0, ""}}), Catch::Contains("epochs, or none"));
  CHECK_THROWS_WITH(check({{"a", 1, 0, "<B T>"}}), Catch::Contains("one word"));
  CHECK(t2t::training_part_split("bt") == "train-bt");
}

TEST_CASE("a mixed reader draws each part in its share, each going round its own files",
          "[data_mix]") {
  t2t::test::TempDir dir("data_mix_share");
  // A small part and a large one: the small one goes round many times.
  DataMix mix = {{"small", write_part(dir, 1, 2, 15), 1}, {"large", write_part(dir, 2, 3, 100), 2}};
  const auto scheme = t2t::batching_scheme(64, 24);
  BatchReader reader(mix, scheme, training());
  std::vector<int64_t> seen(3, 0);
  std::vector<int64_t> small_counts(30, 0);
  int64_t rows = 0;
  for (int b = 0; b < 200; ++b) {
    const auto batch = reader.next();
    REQUIRE(batch.has_value());
    for (int64_t r = 0; r < batch->size(); ++r) {
      const int64_t id = batch->targets[r][0].item<int64_t>();
      ++seen[static_cast<size_t>(id / 100000)];
      if (id / 100000 == 1) ++small_counts[static_cast<size_t>(id % 100000)];
      ++rows;
    }
  }
  // Batches leave examples waiting in the buffers: the share holds up to
  // what they can hold.
  const double small_share = static_cast<double>(seen[1]) / static_cast<double>(rows);
  CHECK(small_share == Approx(1.0 / 3).margin(0.03));
  CHECK(seen[0] == 0);
  // Every example of the small part came round about equally often.
  const auto [lo, hi] = std::minmax_element(small_counts.begin(), small_counts.end());
  CHECK(*lo >= 1);
  CHECK(*hi - *lo <= 2);
  const ReaderState st = reader.state();
  REQUIRE(st.mix.size() == 2);
  CHECK(st.mix[0].part == "small");
  CHECK(st.mix[0].epoch >= 5);
  CHECK(st.epoch == std::min(st.mix[0].epoch, st.mix[1].epoch));
  CHECK(st.mix[0].taken + st.mix[1].taken >= rows);
  // Each draw fits the weights: taken 1:2, within the schedule's bound.
  CHECK(std::abs(static_cast<double>(st.mix[1].taken) - 2.0 * st.mix[0].taken) <= 3.0);
}

TEST_CASE("a mixed reader resumes exactly from its state, and refuses another mix's",
          "[data_mix]") {
  t2t::test::TempDir dir("data_mix_resume");
  DataMix mix = {{"real", write_part(dir, 1, 2, 40), 1},
                 {"bt", write_part(dir, 2, 3, 50), 0.7},
                 {"other", write_part(dir, 3, 1, 12), 0.3}};
  const auto scheme = t2t::batching_scheme(64, 24);
  BatchReader original(mix, scheme, training());
  std::vector<t2t::Batch> reference;
  std::vector<std::string> states{original.state().to_yaml()};
  for (int i = 0; i < 90; ++i) {
    reference.push_back(*original.next());
    states.push_back(original.state().to_yaml());
  }
  for (size_t k : {0, 1, 13, 40, 77}) {
    INFO("resumed after " << k << " batches");
    const ReaderState st = ReaderState::from_yaml(states[k], "test");
    BatchReader resumed(mix, scheme, training(), st);
    CHECK(resumed.state().to_yaml() == states[k]);
    for (size_t i = k; i < std::min(reference.size(), k + 12); ++i) {
      auto b = resumed.next();
      REQUIRE(b.has_value());
      REQUIRE(t2t::test::same_batch(*b, reference[i]));
      REQUIRE(resumed.state().to_yaml() == states[i + 1]);
    }
  }
  const ReaderState st = ReaderState::from_yaml(states[20], "test");
  SECTION("other weights are refused, naming both mixes") {
    DataMix other = mix;
    other[1].weight = 1;
    CHECK_THROWS_WITH(BatchReader(other, scheme, training(), st),
                      Catch::Contains("real 1, bt 0.7, other 0.3") &&
                          Catch::Contains("real 1, bt 1, other 0.3") &&
                          Catch::Contains("new output_dir"));
  }
  SECTION("a part missing is refused") {
    DataMix fewer(mix.begin(), mix.begin() + 2);
    CHECK_THROWS_AS(BatchReader(fewer, scheme, training(), st), t2t::Error);
  }
  SECTION("a mix's state does not resume a plain reader, nor the other way round") {
    CHECK_THROWS_WITH(BatchReader(mix[0].files, scheme, training(), st),
                      Catch::Contains("training mix of 3 parts"));
    BatchReader plain(mix[0].files, scheme, training());
    plain.next();
    CHECK_THROWS_WITH(BatchReader(mix, scheme, training(), plain.state()),
                      Catch::Contains("no mix"));
  }
  SECTION("evaluation does not read a mix") {
    ReaderOptions eval = training();
    eval.training = false;
    CHECK_THROWS_WITH(BatchReader(mix, scheme, eval), Catch::Contains("training only"));
  }
}

TEST_CASE("a YAML problem lists its training parts, and bad parts are refused by name",
          "[data_mix]") {
  t2t::test::TempDir dir("data_mix_yaml");
  auto declare = [&](const std::string& name, const std::vector<std::string>& train) {
    std::vector<std::string> lines = {"name: " + name, "train:"};
    for (const auto& l : train) lines.push_back("  - " + l);
    lines.push_back("shards: {train: 3}");
    const std::string path = dir / (name + ".yaml");
    t2t::test::write_lines(path, lines);
    return path;
  };
  const std::string good =
      declare("mix_parts_ok", {"{name: real, source: a.en, target: a.zh}",
                               "{name: bt, tsv: bt.tsv, weight: 0.25, tag: '<BT>', shards: 2}"});
  t2t::register_yaml_problem(good);
  const auto problem = t2t::create_problem("mix_parts_ok");
  const auto parts = problem->training_parts();
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].name == "bt");
  CHECK(parts[1].weight == 0.25);
  CHECK(parts[1].tag == "<BT>");
  const auto splits = problem->dataset_splits();
  REQUIRE(splits.size() == 2);
  CHECK(splits[0].name == "train-bt");
  CHECK(splits[0].shards == 2);
  CHECK(splits[1].name == "train-real");
  CHECK(splits[1].shards == 3);  // shards' train, for a part without its own
  CHECK(problem->training_filepaths("d").size() == 5);
  // No shards yet: the mix names what to run.
  CHECK_THROWS_WITH(problem->training_mix(dir / "none"), Catch::Contains("t2t-datagen"));

  auto refused = [&](const std::string& name, const std::string& part) {
    return t2t::check_yaml_problem(declare(name, {"{name: real, source: a.en, target: a.zh}", part}));
  };
  CHECK_THROWS_WITH(refused("m1", "{name: bt, tsv: x, wieght: 2}"),
                    Catch::Contains("m1.yaml") && Catch::Contains("unknown key 'wieght'"));
  CHECK_THROWS_WITH(refused("m2", "{name: bt, tsv: x, weight: 1, epochs: 2}"),
                    Catch::Contains("weight or epochs, not both"));
  CHECK_THROWS_WITH(refused("m3", "{name: real, tsv: x}"), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(refused("m4", "{name: bt, tsv: x, weight: heavy}"),
                    Catch::Contains("'weight' must be a number"));
  CHECK_THROWS_WITH(refused("m5", "{name: bt, tsv: x, epochs: 2}"),
                    Catch::Contains("epochs, or none"));
  CHECK_THROWS_WITH(refused("m6", "{name: bt, tsv: x, tag: 'a b'}"), Catch::Contains("one word"));
  CHECK_THROWS_WITH(refused("m7", "{name: bt, tsv: x, shards: 0}"),
                    Catch::Contains("shards must be a positive integer"));
  CHECK_THROWS_WITH(refused("m8", "{name: bt}"), Catch::Contains("missing key 'source'"));
}

TEST_CASE("parts given in epochs weigh epochs times their examples", "[data_mix]") {
  t2t::test::TempDir dir("data_mix_epochs");
  t2t::test::write_lines(dir / "mix_epochs.yaml",
                         {"name: mix_epochs", "train:", "  - {name: a, tsv: a.tsv, epochs: 2}",
                          "  - {name: b, tsv: b.tsv, epochs: 0.5}", "shards: {train: 1}"});
  t2t::register_yaml_problem(dir / "mix_epochs.yaml");
  auto write = [&](const std::string& part, int records) {
    t2t::TFRecordWriter w(dir / ("mix_epochs-train-" + part + "-00000-of-00001"));
    for (int i = 0; i < records; ++i)
      w.write(t2t::serialize_example({{"inputs", {5, 1}}, {"targets", {6, 1}}}));
    w.close();
  };
  write("a", 3);
  write("b", 40);
  const DataMix mix = t2t::create_problem("mix_epochs")->training_mix(dir.path.string());
  REQUIRE(mix.size() == 2);
  CHECK(mix[0].weight == 6);   // 2 x 3
  CHECK(mix[1].weight == 20);  // 0.5 x 40
  CHECK(t2t::describe_mix(mix) == "a 6, b 20");
}
