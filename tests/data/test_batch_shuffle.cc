// The training reader's batch shuffle (T2T's batch_shuffle_size): read from
// the hparam, a reordering of the batches the reader makes without it, and
// resumable exactly from a saved state.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "t2t/model/common_hparams.h"
#include "t2t/core/error.h"
#include "t2t/data/batch_reader.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/batch_compare.h"
#include "tests/support/test_util.h"

using t2t::Batch;
using t2t::BatchReader;
using t2t::ReaderOptions;
using t2t::ReaderState;
using t2t::test::same_batch;

namespace {

// Shards whose example i has first target id 1000 + i, lengths 1..max_len.
std::vector<std::string> write_shards(const t2t::test::TempDir& dir, int files, int per_file,
                                      int max_len) {
  std::vector<std::string> paths;
  int64_t i = 0;
  for (int f = 0; f < files; ++f) {
    char name[64];
    std::snprintf(name, sizeof name, "shuffle-train-%05d-of-%05d", f, files);
    paths.push_back(dir / name);
    t2t::TFRecordWriter w(paths.back());
    for (int r = 0; r < per_file; ++r, ++i) {
      std::vector<int64_t> inputs(static_cast<size_t>(1 + (i * 13) % max_len), 7);
      std::vector<int64_t> targets(static_cast<size_t>(1 + (i * 7 + i / 5) % max_len), 9);
      inputs[0] = 5000 + i;
      targets[0] = 1000 + i;
      w.write(t2t::serialize_example({{"inputs", inputs}, {"targets", targets}}));
    }
    w.close();
  }
  return paths;
}

// A batch named by its rows' example ids, in order.
std::vector<int64_t> ids(const Batch& b) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < b.size(); ++r) out.push_back(b.targets[r][0].item<int64_t>() - 1000);
  return out;
}

ReaderOptions training(int64_t batch_shuffle, int64_t shuffle_buffer = 16) {
  ReaderOptions o;
  o.training = true;
  o.seed = 3;
  o.shuffle_buffer = shuffle_buffer;
  o.batch_shuffle = batch_shuffle;
  o.prefetch = 2;
  return o;
}

}  // namespace

TEST_CASE("batch_shuffle_size is read for training only, and checked", "[batch_shuffle]") {
  t2t::HParams hp = t2t::basic_params1();
  CHECK(t2t::reader_options(hp, true, false, 1).batch_shuffle == 512);  // T2T's value
  CHECK(t2t::reader_options(hp, false, false, 1).batch_shuffle == 0);
  hp.parse("batch_shuffle_size=0");
  CHECK(t2t::reader_options(hp, true, false, 1).batch_shuffle == 0);
  hp.parse("batch_shuffle_size=-2");
  CHECK_THROWS_WITH(t2t::reader_options(hp, true, false, 1),
                    Catch::Contains("batch_shuffle_size=-2") && Catch::Contains(">= 0"));
}

TEST_CASE("the batch shuffle reorders the batches the reader makes without it",
          "[batch_shuffle]") {
  t2t::test::TempDir dir("batch_shuffle_order");
  const auto files = write_shards(dir, 3, 40, 24);
  const auto scheme = t2t::batching_scheme(48, 24);
  BatchReader plain(files, scheme, training(0)), shuffled(files, scheme, training(8));
  std::vector<std::vector<int64_t>> made, out;
  for (int i = 0; i < 80; ++i) made.push_back(ids(*plain.next()));
  for (int i = 0; i < 60; ++i) out.push_back(ids(*shuffled.next()));
  // Every batch out is one of the unshuffled ones, each used once, none
  // from further ahead than the buffer's 8.
  std::vector<bool> used(made.size(), false);
  for (size_t k = 0; k < out.size(); ++k) {
    INFO("batch " << k);
    size_t j = 0;
    while (j < made.size() && (used[j] || made[j] != out[k])) ++j;
    REQUIRE(j < made.size());
    CHECK(j <= k + 8);
    used[j] = true;
  }
  CHECK(out != std::vector<std::vector<int64_t>>(made.begin(), made.begin() + 60));
  // 1 means none, as 0 does.
  BatchReader one(files, scheme, training(1));
  for (int i = 0; i < 20; ++i) CHECK(ids(*one.next()) == made[static_cast<size_t>(i)]);
}

TEST_CASE("a reader state resumes the batch shuffle exactly", "[batch_shuffle]") {
  t2t::test::TempDir dir("batch_shuffle_resume");
  const auto files = write_shards(dir, 3, 45, 30);
  const auto scheme = t2t::batching_scheme(64, 30);
  const ReaderOptions o = training(6);
  BatchReader original(files, scheme, o);
  std::vector<Batch> reference;
  std::vector<std::string> states{original.state().to_yaml()};
  for (int i = 0; i < 120; ++i) {
    reference.push_back(*original.next());
    states.push_back(original.state().to_yaml());
  }
  CHECK(original.epoch() >= 2);
  for (size_t k : {0, 1, 5, 17, 44, 80, 101}) {
    INFO("resumed after " << k << " batches");
    const ReaderState st = ReaderState::from_yaml(states[k], "test");
    if (k > 0) {
      CHECK(st.batch_buffer_rows.size() == 6);
      CHECK_FALSE(st.batch_rng.empty());
    }
    BatchReader resumed(files, scheme, o, st);
    CHECK(resumed.state().to_yaml() == states[k]);
    for (size_t i = k; i < std::min(reference.size(), k + 20); ++i) {
      auto b = resumed.next();
      REQUIRE(b.has_value());
      REQUIRE(same_batch(*b, reference[i]));
      REQUIRE(resumed.state().to_yaml() == states[i + 1]);
    }
  }
  SECTION("a state holding more batches than the buffer allows is refused") {
    const ReaderState st = ReaderState::from_yaml(states[30], "test");
    CHECK_THROWS_WITH(BatchReader(files, scheme, training(0), st),
                      Catch::Contains("batch_shuffle_size"));
    CHECK_THROWS_AS(BatchReader(files, scheme, training(4), st), t2t::Error);
    // A larger buffer takes it up and goes on filling.
    BatchReader larger(files, scheme, training(10), st);
    CHECK(larger.next().has_value());
  }
  SECTION("a state saved without the batch shuffle starts one") {
    BatchReader plain(files, scheme, training(0));
    for (int i = 0; i < 10; ++i) plain.next();
    const ReaderState st = plain.state();
    CHECK(st.batch_buffer.empty());
    CHECK(st.batch_rng.empty());
    BatchReader resumed(files, scheme, o, st);
    CHECK(resumed.next().has_value());
    CHECK(resumed.state().batch_buffer_rows.size() == 6);
  }
}
