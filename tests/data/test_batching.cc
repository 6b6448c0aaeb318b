#include <ATen/ATen.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/data/batch_reader.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/batch_compare.h"
#include "tests/support/test_util.h"

using t2t::Batch;
using t2t::BatchingScheme;
using t2t::BatchReader;
using t2t::ReaderOptions;
using t2t::ReaderState;
using t2t::test::same_batch;

namespace {

struct Pair {
  std::vector<int64_t> inputs;
  std::vector<int64_t> targets;
  int64_t length() const { return static_cast<int64_t>(std::max(inputs.size(), targets.size())); }
};

// Shards of examples whose first target id is 1000 + the example's index
// and first input id 5000 + the index, so that a batch row names its
// example; lengths spread over 1..max_len, ids never 0, EOS (1) last.
struct Corpus {
  std::vector<std::string> files;
  std::vector<Pair> examples;
};

Corpus write_corpus(const t2t::test::TempDir& dir, int num_files, int per_file, int max_len,
                    const std::string& stem = "data") {
  Corpus c;
  std::mt19937 gen(7);
  for (int f = 0; f < num_files; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "%s-train-%05d-of-%05d", stem.c_str(), f, num_files);
    c.files.push_back(dir / name);
    t2t::TFRecordWriter w(c.files.back());
    for (int r = 0; r < per_file; ++r) {
      const int64_t i = static_cast<int64_t>(c.examples.size());
      Pair p;
      const int64_t in_len = 1 + (i * 13) % max_len, out_len = 1 + (i * 7 + i / 5) % max_len;
      p.inputs.push_back(5000 + i);
      p.targets.push_back(1000 + i);
      while (static_cast<int64_t>(p.inputs.size()) < in_len) p.inputs.push_back(2 + gen() % 900);
      while (static_cast<int64_t>(p.targets.size()) < out_len) p.targets.push_back(2 + gen() % 900);
      if (in_len > 1) p.inputs.back() = 1;
      if (out_len > 1) p.targets.back() = 1;
      w.write(t2t::serialize_example({{"inputs", p.inputs}, {"targets", p.targets}}));
      c.examples.push_back(std::move(p));
    }
    w.close();
  }
  return c;
}

std::vector<int64_t> row(const at::Tensor& t, int64_t r) {
  at::Tensor x = t[r].contiguous();
  return std::vector<int64_t>(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + x.numel());
}

// Checks every row against the corpus (content, zero padding, token counts)
// and returns the example indices of the rows.
std::vector<int64_t> check_batch(const Batch& b, const Corpus& c, bool reversed = false) {
  REQUIRE(b.inputs.scalar_type() == at::kLong);
  REQUIRE(b.targets.scalar_type() == at::kLong);
  REQUIRE(b.inputs.dim() == 2);
  REQUIRE(b.targets.size(0) == b.inputs.size(0));
  std::vector<int64_t> ids;
  int64_t in_tokens = 0, out_tokens = 0, widest_in = 0, widest_out = 0;
  for (int64_t r = 0; r < b.size(); ++r) {
    std::vector<int64_t> in = row(b.inputs, r), out = row(b.targets, r);
    const int64_t id = (reversed ? in[0] : out[0]) - 1000;
    REQUIRE(id >= 0);
    REQUIRE(id < static_cast<int64_t>(c.examples.size()));
    const Pair& p = c.examples[static_cast<size_t>(id)];
    const auto& want_in = reversed ? p.targets : p.inputs;
    const auto& want_out = reversed ? p.inputs : p.targets;
    REQUIRE(std::vector<int64_t>(in.begin(), in.begin() + want_in.size()) == want_in);
    REQUIRE(std::vector<int64_t>(out.begin(), out.begin() + want_out.size()) == want_out);
    for (size_t k = want_in.size(); k < in.size(); ++k) REQUIRE(in[k] == 0);
    for (size_t k = want_out.size(); k < out.size(); ++k) REQUIRE(out[k] == 0);
    in_tokens += static_cast<int64_t>(want_in.size());
    out_tokens += static_cast<int64_t>(want_out.size());
    widest_in = std::max<int64_t>(widest_in, want_in.size());
    widest_out = std::max<int64_t>(widest_out, want_out.size());
    ids.push_back(id);
  }
  // Padded to the longest row, no wider.
  REQUIRE(b.inputs.size(1) == widest_in);
  REQUIRE(b.targets.size(1) == widest_out);
  REQUIRE(b.input_tokens == in_tokens);
  REQUIRE(b.target_tokens == out_tokens);
  return ids;
}

ReaderOptions train_options(uint64_t seed = 1) {
  ReaderOptions o;
  o.training = true;
  o.seed = seed;
  o.shuffle_buffer = 16;
  o.prefetch = 3;
  return o;
}

ReaderOptions eval_options() {
  ReaderOptions o;
  o.training = false;
  return o;
}

// Every batch of an evaluation pass.
std::vector<Batch> drain(BatchReader& r) {
  std::vector<Batch> out;
  while (auto b = r.next()) out.push_back(std::move(*b));
  return out;
}

}  // namespace

TEST_CASE("bucket boundaries follow T2T's rule", "[batching]") {
  const std::vector<int64_t> want256 = {8,  9,  10, 11,  12,  13,  14,  15,  16,  17,  18,
                                        19, 20, 22, 24,  26,  28,  30,  33,  36,  39,  42,
                                        46, 50, 55, 60,  66,  72,  79,  86,  94,  103, 113,
                                        124, 136, 149, 163, 179, 196, 215, 236};
  CHECK(t2t::bucket_boundaries(256) == want256);
  CHECK(t2t::bucket_boundaries(256).size() == 41);
  CHECK(t2t::bucket_boundaries(8).empty());
  CHECK(t2t::bucket_boundaries(10) == std::vector<int64_t>{8, 9});
  CHECK(t2t::bucket_boundaries(64, 2, 2.0) == std::vector<int64_t>{2, 4, 8, 16, 32});
  CHECK(t2t::bucket_boundaries(100, 8, 1.5) == std::vector<int64_t>{8, 12, 18, 27, 40, 60, 90});
  const auto b4096 = t2t::bucket_boundaries(4096);
  REQUIRE(b4096.size() == 71);
  CHECK(b4096.back() == 4046);
  CHECK_THROWS_AS(t2t::bucket_boundaries(256, 8, 1.0), t2t::Error);
}

TEST_CASE("per-bucket batch sizes follow T2T's batching scheme", "[batching]") {
  SECTION("batch_size 4096, max_length 256: divisors of 1260") {
    BatchingScheme s = t2t::batching_scheme(4096, 256);
    REQUIRE(s.batch_sizes.size() == 42);
    REQUIRE(s.max_length == 256);
    // 4096 // 8 = 512 and 4096 // 9 = 455 both round down to 420; 4096 // 10
    // = 409 to 315; 4096 // 236 = 17 and 4096 // 256 = 16 to 15.
    const std::vector<int64_t> want = {420, 420, 315, 315, 315, 315, 252, 252, 252, 210, 210,
                                       210, 180, 180, 140, 140, 140, 126, 105, 105, 105, 90,
                                       84,  70,  70,  63,  60,  45,  45,  45,  42,  36,  36,
                                       30,  30,  21,  21,  21,  20,  18,  15,  15};
    CHECK(s.batch_sizes == want);
    for (size_t i = 0; i < s.boundaries.size(); ++i) {
      CHECK(1260 % s.batch_sizes[i] == 0);
      // Every example in bucket i is shorter than boundaries[i]: the padded
      // batch stays within the token budget.
      CHECK(s.batch_sizes[i] * (s.boundaries[i] - 1) <= 4096);
    }
    CHECK(s.batch_sizes.back() * s.max_length <= 4096);
  }
  SECTION("batch_size 1024 (single GPU): window 360") {
    BatchingScheme s = t2t::batching_scheme(1024, 256);
    CHECK(s.batch_sizes.front() == 120);  // 1024 // 8 = 128
    CHECK(s.batch_sizes[1] == 90);        // 1024 // 9 = 113
    CHECK(s.batch_sizes.back() == 4);     // 1024 // 256 = 4
  }
  SECTION("max_length 0 means batch_size") {
    BatchingScheme s = t2t::batching_scheme(4096, 0);
    CHECK(s.max_length == 4096);
    CHECK(s.boundaries.size() == 71);
    CHECK(s.batch_sizes.front() == 420);
    CHECK(s.batch_sizes.back() == 1);
  }
  SECTION("shard multiplier and hparams") {
    CHECK(t2t::batching_scheme(4096, 256, 8, 1.1, 0, 2).batch_sizes.front() == 840);
    t2t::HParams hp = t2t::hparams_registry().get("transformer_base")();
    BatchingScheme s = t2t::batching_scheme(hp);
    CHECK(s.batch_sizes == t2t::batching_scheme(4096, 256).batch_sizes);
    hp.set("max_input_seq_length", 100);
    hp.set("eval_drop_long_sequences", true);
    ReaderOptions o = t2t::reader_options(hp, false, true, 17);
    CHECK_FALSE(o.training);
    CHECK(o.reversed);
    CHECK(o.seed == 17);
    CHECK(o.max_input_seq_length == 100);
    CHECK(o.max_target_seq_length == 0);
    CHECK(o.eval_drop_long_sequences);
    hp.set("use_fixed_batch_size", true);
    hp.set("batch_size", 32);
    s = t2t::batching_scheme(hp);
    CHECK(s.boundaries.empty());
    CHECK(s.batch_sizes == std::vector<int64_t>{32});
  }
  SECTION("bucket of a length") {
    BatchingScheme s = t2t::batching_scheme(4096, 256);
    CHECK(s.bucket(0) == 0);
    CHECK(s.bucket(7) == 0);
    CHECK(s.bucket(8) == 1);
    CHECK(s.bucket(21) == 13);  // [20, 22)
    CHECK(s.bucket(236) == 41);
    CHECK(s.bucket(100000) == 41);
  }
  CHECK_THROWS_AS(t2t::batching_scheme(0, 256), t2t::Error);
  CHECK_THROWS_AS(t2t::batching_scheme(4096, 8, 8, 1.1, 9), t2t::Error);
}

TEST_CASE("an evaluation pass reads every example once, in order, long ones kept", "[batching]") {
  t2t::test::TempDir dir("batching_eval");
  Corpus c = write_corpus(dir, 3, 50, 40);
  BatchingScheme s = t2t::batching_scheme(64, 32);
  BatchReader reader(c.files, s, eval_options());
  std::vector<Batch> batches = drain(reader);
  CHECK_FALSE(reader.next().has_value());  // stays over
  std::multiset<int64_t> seen;
  bool saw_long = false;
  for (const Batch& b : batches)
    for (int64_t id : check_batch(b, c)) {
      seen.insert(id);
      saw_long = saw_long || c.examples[static_cast<size_t>(id)].length() > 32;
    }
  CHECK(seen.size() == c.examples.size());
  for (size_t i = 0; i < c.examples.size(); ++i) CHECK(seen.count(static_cast<int64_t>(i)) == 1);
  CHECK(saw_long);

  SECTION("eval_drop_long_sequences drops them") {
    ReaderOptions o = eval_options();
    o.eval_drop_long_sequences = true;
    BatchReader dropping(c.files, s, o);
    size_t kept = 0;
    for (const Batch& b : drain(dropping))
      for (int64_t id : check_batch(b, c)) {
        CHECK(c.examples[static_cast<size_t>(id)].length() <= 32);
        ++kept;
      }
    size_t short_ones = 0;
    for (const Pair& p : c.examples) short_ones += p.length() <= 32;
    CHECK(kept == short_ones);
  }
  SECTION("a reversed problem swaps inputs and targets") {
    ReaderOptions o = eval_options();
    o.reversed = true;
    BatchReader rev(c.files, s, o);
    size_t n = 0;
    for (const Batch& b : drain(rev)) n += check_batch(b, c, true).size();
    CHECK(n == c.examples.size());
  }
  SECTION("truncation to max_input/target_seq_length") {
    ReaderOptions o = eval_options();
    o.max_input_seq_length = 3;
    o.max_target_seq_length = 4;
    BatchReader cut(c.files, s, o);
    for (const Batch& b : drain(cut)) {
      CHECK(b.inputs.size(1) <= 3);
      CHECK(b.targets.size(1) <= 4);
    }
  }
}

TEST_CASE("training drops long examples and keeps batches within the token budget",
          "[batching]") {
  t2t::test::TempDir dir("batching_train");
  Corpus c = write_corpus(dir, 4, 60, 40);
  BatchingScheme s = t2t::batching_scheme(64, 32);
  BatchReader reader(c.files, s, train_options());
  std::map<int64_t, int> count;
  for (int i = 0; i < 400; ++i) {
    auto b = reader.next();
    REQUIRE(b.has_value());
    for (int64_t id : check_batch(*b, c)) {
      REQUIRE(c.examples[static_cast<size_t>(id)].length() <= 32);
      ++count[id];
    }
    const int64_t width = std::max(b->inputs.size(1), b->targets.size(1));
    CHECK(b->size() * width <= 64);
    CHECK(b->target_tokens <= 64);
    // A full bucket: one of the scheme's batch sizes.
    CHECK(std::find(s.batch_sizes.begin(), s.batch_sizes.end(), b->size()) != s.batch_sizes.end());
  }
  const int64_t epochs = reader.epoch();
  CHECK(epochs >= 2);
  // Every short example shows up, and never more often than the passes
  // begun so far (some still wait in buckets that fill slowly).
  int lo = 1 << 30, hi = 0;
  for (size_t i = 0; i < c.examples.size(); ++i) {
    if (c.examples[i].length() > 32) continue;
    const int n = count[static_cast<int64_t>(i)];
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  CHECK(lo >= 1);
  CHECK(hi <= epochs + 1);
}

TEST_CASE("each training epoch holds every example exactly once", "[batching]") {
  t2t::test::TempDir dir("batching_epoch");
  Corpus c = write_corpus(dir, 4, 10, 20);
  // One bucket of 5 and 40 examples: batches 8k .. 8k+7 are epoch k.
  BatchingScheme s;
  s.batch_sizes = {5};
  s.max_length = 100;
  BatchReader reader(c.files, s, train_options(3));
  std::vector<std::vector<int64_t>> epochs;
  for (int e = 0; e < 3; ++e) {
    std::vector<int64_t> ids;
    for (int i = 0; i < 8; ++i) {
      auto b = reader.next();
      REQUIRE(b.has_value());
      for (int64_t id : check_batch(*b, c)) ids.push_back(id);
    }
    std::vector<int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 40; ++i) REQUIRE(sorted[static_cast<size_t>(i)] == i);
    CHECK(reader.epoch() == e);
    epochs.push_back(ids);
  }
  // Shuffled, and differently each epoch.
  std::vector<int64_t> in_order(40);
  for (int64_t i = 0; i < 40; ++i) in_order[static_cast<size_t>(i)] = i;
  CHECK(epochs[0] != in_order);
  CHECK(epochs[0] != epochs[1]);
  CHECK(epochs[1] != epochs[2]);
}

TEST_CASE("data-parallel workers read disjoint data that covers everything", "[batching]") {
  t2t::test::TempDir dir("batching_workers");
  BatchingScheme s = t2t::batching_scheme(64, 64);
  auto check_workers = [&](const Corpus& c, int64_t workers, bool training) {
    std::vector<std::set<int64_t>> per_worker(static_cast<size_t>(workers));
    for (int64_t k = 0; k < workers; ++k) {
      ReaderOptions o = training ? train_options() : eval_options();
      o.worker = k;
      o.num_workers = workers;
      if (training) {
        // One bucket of 1: every example is its own batch, so one epoch's
        // worth of batches is exactly this worker's share.
        BatchingScheme one;
        one.batch_sizes = {1};
        one.max_length = 1000;
        BatchReader r(c.files, one, o);
        while (r.epoch() == 0) {
          auto b = r.next();
          REQUIRE(b.has_value());
          if (r.epoch() == 0)
            for (int64_t id : check_batch(*b, c)) per_worker[static_cast<size_t>(k)].insert(id);
        }
      } else {
        BatchReader r(c.files, s, o);
        for (const Batch& b : drain(r))
          for (int64_t id : check_batch(b, c)) {
            REQUIRE(per_worker[static_cast<size_t>(k)].insert(id).second);
          }
      }
    }
    std::set<int64_t> all;
    size_t total = 0;
    for (const auto& w : per_worker) {
      CHECK_FALSE(w.empty());
      total += w.size();
      all.insert(w.begin(), w.end());
    }
    CHECK(total == all.size());  // disjoint
    CHECK(all.size() == c.examples.size());
  };
  SECTION("by file") {
    Corpus c = write_corpus(dir, 5, 12, 30, "files");
    check_workers(c, 2, false);
    check_workers(c, 2, true);
  }
  SECTION("by record, with fewer files than workers") {
    Corpus c = write_corpus(dir, 2, 25, 30, "records");
    check_workers(c, 3, false);
    check_workers(c, 3, true);
  }
}

TEST_CASE("a seed gives the same batches every time", "[batching]") {
  t2t::test::TempDir dir("batching_seed");
  Corpus c = write_corpus(dir, 4, 40, 40);
  BatchingScheme s = t2t::batching_scheme(64, 32);
  BatchReader a(c.files, s, train_options(11)), b(c.files, s, train_options(11)),
      other(c.files, s, train_options(12));
  bool all_same_as_other = true;
  for (int i = 0; i < 120; ++i) {
    auto x = a.next(), y = b.next(), z = other.next();
    REQUIRE(same_batch(*x, *y));
    all_same_as_other = all_same_as_other && same_batch(*x, *z);
  }
  CHECK_FALSE(all_same_as_other);
}

TEST_CASE("a saved reader state resumes with exactly the same batches", "[batching]") {
  t2t::test::TempDir dir("batching_resume");
  Corpus c = write_corpus(dir, 3, 45, 40);
  BatchingScheme s = t2t::batching_scheme(64, 32);
  ReaderOptions o = train_options(5);
  // Taken at many points: mid-file, across files, while the shuffle buffer
  // empties at an epoch's end, and in later epochs.
  BatchReader original(c.files, s, o);
  std::vector<Batch> reference;
  std::vector<std::string> states;
  states.push_back(original.state().to_yaml());
  for (int i = 0; i < 150; ++i) {
    reference.push_back(*original.next());
    states.push_back(original.state().to_yaml());
  }
  CHECK(original.epoch() >= 3);
  std::vector<size_t> points = {0, 1, 7, 23, 40, 41, 42, 43, 44, 45, 60, 99, 120};
  // Also the first state taken while the shuffle buffer empties at the end
  // of an epoch, and the first whose buckets hold the same record twice
  // (copies from two epochs, in a bucket that fills slowly).
  size_t draining = 0, duplicate = 0;
  for (size_t k = 1; k < states.size() && (!draining || !duplicate); ++k) {
    ReaderState st = ReaderState::from_yaml(states[k], "test");
    if (!draining && st.file_position == 3 && !st.shuffle_buffer.empty()) draining = k;
    std::set<std::pair<int64_t, int64_t>> seen;
    for (const auto& a : st.bucketed)
      if (!duplicate && !seen.insert({a.file, a.record}).second) duplicate = k;
  }
  REQUIRE(draining > 0);
  REQUIRE(duplicate > 0);
  points.push_back(draining);
  points.push_back(duplicate);
  for (size_t k : points) {
    INFO("resumed after " << k << " batches");
    ReaderState st = ReaderState::from_yaml(states[k], "test");
    CHECK(st.to_yaml() == states[k]);
    BatchReader resumed(c.files, s, o, st);
    CHECK(resumed.state().to_yaml() == states[k]);
    for (size_t i = k; i < std::min(reference.size(), k + 25); ++i) {
      auto b = resumed.next();
      REQUIRE(b.has_value());
      REQUIRE(same_batch(*b, reference[i]));
      REQUIRE(resumed.state().to_yaml() == states[i + 1]);
    }
  }
  SECTION("evaluation resumes too") {
    BatchReader ev(c.files, s, eval_options());
    std::vector<Batch> all = drain(ev);
    BatchReader ev2(c.files, s, eval_options());
    for (int i = 0; i < 5; ++i) ev2.next();
    BatchReader ev3(c.files, s, eval_options(), ev2.state());
    std::vector<Batch> rest = drain(ev3);
    REQUIRE(rest.size() == all.size() - 5);
    for (size_t i = 0; i < rest.size(); ++i) REQUIRE(same_batch(rest[i], all[i + 5]));
  }
  SECTION("a state that does not fit is refused") {
    ReaderState st = ReaderState::from_yaml(states[10], "test");
    ReaderOptions w = o;
    w.num_workers = 2;
    CHECK_THROWS_AS(BatchReader(c.files, s, w, st), t2t::Error);
    std::vector<std::string> fewer(c.files.begin(), c.files.end() - 1);
    CHECK_THROWS_AS(BatchReader(fewer, s, o, st), t2t::Error);
    CHECK_THROWS_AS(ReaderState::from_yaml("epoch: [1, 2", "broken.yaml"), t2t::Error);
    CHECK_THROWS_WITH(ReaderState::from_yaml("epoch: 1", "partial.yaml"),
                      Catch::Contains("partial.yaml"));
  }
}

TEST_CASE("reading errors come out of next()", "[batching]") {
  t2t::test::TempDir dir("batching_errors");
  Corpus c = write_corpus(dir, 1, 20, 10);
  {
    std::FILE* f = std::fopen((dir / "corrupt").c_str(), "wb");
    std::fputs("this is not a TFRecord file at all", f);
    std::fclose(f);
  }
  BatchingScheme s = t2t::batching_scheme(64, 32);
  SECTION("corrupt file") {
    BatchReader r({c.files[0], dir / "corrupt"}, s, eval_options());
    CHECK_THROWS_AS(drain(r), t2t::Error);
    CHECK_THROWS_AS(r.next(), t2t::Error);  // and stays failed
  }
  SECTION("missing file") {
    BatchReader r({dir / "missing"}, s, train_options());
    CHECK_THROWS_WITH(r.next(), Catch::Contains("missing"));
  }
  SECTION("nothing short enough to train on") {
    BatchingScheme tiny = t2t::batching_scheme(64, 32);
    tiny.min_length = 31;
    tiny.max_length = 31;
    Corpus shorts = write_corpus(dir, 1, 5, 4, "shorts");
    BatchReader r(shorts.files, tiny, train_options());
    CHECK_THROWS_WITH(r.next(), Catch::Contains("max_length 31"));
  }
  CHECK_THROWS_AS(BatchReader(std::vector<std::string>{}, s, eval_options()), t2t::Error);
}
