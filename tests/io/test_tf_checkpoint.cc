// The TensorFlow checkpoint reader against checkpoints written by real
// TensorFlow (tests/fixtures/tf_checkpoint/make_fixtures.py), damaged copies
// of them, and a few thousand random mutations of an index.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/io/crc32c.h"
#include "t2t/io/tf_checkpoint.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::TempDir;

namespace {

const std::string kFixtures = t2t::test::source_dir() + "/tests/fixtures/tf_checkpoint";
const std::string kTypedPrefix = "model.ckpt-1234";
const std::string kTypedData = kTypedPrefix + ".data-00000-of-00001";

// Unlinks first: ext4 flushes a file truncated and rewritten in place when it
// is closed, which made the thousands of rewrites of the fuzz test slow.
void dump(const std::string& path, const std::string& content) {
  std::error_code ec;
  fs::remove(path, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// One tensor of expected.txt: what the script gave TensorFlow to save.
struct Expected {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> values;  // as written: exact float32 values or integers
};

// dir ("typed", "sharded") -> name -> tensor.
std::map<std::string, std::map<std::string, Expected>> load_expected() {
  std::map<std::string, std::map<std::string, Expected>> out;
  for (const auto& line : t2t::test::read_lines(kFixtures + "/expected.txt")) {
    std::istringstream in(line);
    std::string dir, name, shape;
    Expected e;
    in >> dir >> name >> e.dtype >> shape;
    if (shape != "scalar") {
      std::istringstream dims(shape);
      for (std::string d; std::getline(dims, d, ',');) e.shape.push_back(std::stoll(d));
    }
    for (std::string v; in >> v;) e.values.push_back(v);
    out[dir][name] = e;
  }
  return out;
}

// Copies a fixture checkpoint's files into `dir`; returns the prefix there.
std::string copy_fixture(const std::string& fixture, const fs::path& dir) {
  for (const auto& f : fs::directory_iterator(kFixtures + "/" + fixture))
    fs::copy_file(f.path(), dir / f.path().filename(), fs::copy_options::overwrite_existing);
  return (dir / (fixture == "sharded" ? "model.ckpt-7" : kTypedPrefix)).string();
}

// The footer's two BlockHandles (metaindex, index): four varint64s.
std::vector<uint64_t> footer_handles(const std::string& index) {
  std::vector<uint64_t> out;
  size_t p = index.size() - 48;
  for (int i = 0; i < 4; ++i) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t b = static_cast<uint8_t>(index[p++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    out.push_back(v);
  }
  return out;
}

// Makes the trailer of the block [offset, offset + size) match its contents
// again, so that a mutation inside it reaches the entry and proto parsers.
void fix_block_crc(std::string& index, uint64_t offset, uint64_t size) {
  const uint32_t crc = t2t::mask_crc32c(t2t::crc32c(index.data() + offset, size + 1));
  for (int i = 0; i < 4; ++i) index[offset + size + 1 + i] = static_cast<char>(crc >> (8 * i));
}

// The t2t::Error message of `fn`, or "" (and a failed check) if none.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const t2t::Error& e) {
    return e.what();
  }
  FAIL_CHECK("no t2t::Error thrown");
  return "";
}

void check_tensors(const t2t::TFCheckpointReader& r, const std::map<std::string, Expected>& want) {
  for (const auto& [name, e] : want) {
    INFO(r.prefix() << " " << name);
    REQUIRE(r.has(name));
    const t2t::TFTensorEntry& entry = r.entry(name);
    CHECK(entry.name == name);
    CHECK(t2t::tf_dtype_name(entry.dtype) == e.dtype);
    CHECK(entry.shape == e.shape);
    CHECK(entry.num_elements() == static_cast<int64_t>(e.values.size()));
    CHECK_FALSE(entry.sliced);
    if (e.dtype == "float32" || e.dtype == "float64" || e.dtype == "bfloat16" ||
        e.dtype == "float16") {
      std::vector<float> want_values;
      for (const auto& v : e.values) want_values.push_back(static_cast<float>(std::stod(v)));
      CHECK(r.read_floats(name) == want_values);  // exact: the values are float32's
    } else {
      std::vector<int64_t> want_values;
      for (const auto& v : e.values) want_values.push_back(std::stoll(v));
      CHECK(r.read_ints(name) == want_values);
    }
  }
}

}  // namespace

TEST_CASE("TF checkpoint: every dtype reads back as TensorFlow saved it", "[tf_checkpoint]") {
  const auto expected = load_expected();
  const auto& typed = expected.at("typed");
  // multiblock/ holds the same tensors with the index re-blocked into many
  // small data blocks (TF reads it back: the script checks).
  for (const std::string dir : {"typed", "multiblock"}) {
    const t2t::TFCheckpointReader r(kFixtures + "/" + dir + "/" + kTypedPrefix);
    INFO(dir);
    check_tensors(r, typed);
    // Every tensor of the checkpoint, sorted, plus the string the script saved.
    std::vector<std::string> names;
    for (const auto& [name, e] : typed) names.push_back(name);
    names.push_back("model/string_scalar");
    std::sort(names.begin(), names.end());
    CHECK(r.names() == names);
    CHECK(std::is_sorted(r.names().begin(), r.names().end()));
    CHECK_FALSE(r.has(""));

    CHECK(r.read_scalar_int("global_step") == 1234);
    CHECK(r.entry("global_step").shape.empty());
    CHECK(r.read_bytes("model/bool_vector") == std::string("\1\0\0\1\0", 5));
    CHECK(r.read_bytes("model/float32_empty").empty());
    CHECK(r.read_floats("model/float32_empty").empty());
    CHECK(r.entry("model/float32_empty").shape == std::vector<int64_t>{0, 3});

    // Listed, but not read as numbers.
    CHECK(r.entry("model/string_scalar").dtype == static_cast<int>(t2t::TFDType::kString));
    CHECK_THAT(error_of([&] { r.read_bytes("model/string_scalar"); }),
               Contains("model/string_scalar") && Contains("strings"));
    CHECK_THAT(error_of([&] { r.read_floats("model/int32_matrix"); }),
               Contains("model/int32_matrix") && Contains("int32") && Contains("floats"));
    CHECK_THAT(error_of([&] { r.read_ints("model/float32_vector"); }),
               Contains("model/float32_vector") && Contains("integers"));
    CHECK_THAT(error_of([&] { r.read_scalar_int("model/int64_vector"); }),
               Contains("model/int64_vector") && Contains("3 elements"));
  }
  CHECK(t2t::tf_dtype_name(14) == "bfloat16");
  CHECK(t2t::tf_dtype_name(19) == "float16");
  CHECK(t2t::tf_dtype_name(23) == "DataType 23");
}

TEST_CASE("TF checkpoint: a checkpoint in two data shards", "[tf_checkpoint]") {
  const t2t::TFCheckpointReader r(kFixtures + "/sharded/model.ckpt-7");
  check_tensors(r, load_expected().at("sharded"));
  CHECK(r.names() == std::vector<std::string>{"a/bias", "a/kernel", "b/bias", "b/kernel"});
  // One shard per device the variables were on.
  CHECK(r.entry("a/kernel").shard_id == 0);
  CHECK(r.entry("b/kernel").shard_id == 1);
  CHECK(r.shard_path(1) == kFixtures + "/sharded/model.ckpt-7.data-00001-of-00002");

  TempDir tmp("tf_ckpt_shards");
  const std::string prefix = copy_fixture("sharded", tmp.path);
  fs::remove(prefix + ".data-00001-of-00002");
  CHECK_THAT(error_of([&] { t2t::TFCheckpointReader{prefix}; }),
             Contains(prefix + ".data-00001-of-00002") && Contains("2 shards"));
}

TEST_CASE("TF checkpoint: find_tf_checkpoint", "[tf_checkpoint]") {
  // The `checkpoint` files TF1's Saver wrote: a relative path...
  CHECK(t2t::find_tf_checkpoint(kFixtures + "/typed") == kFixtures + "/typed/" + kTypedPrefix);
  // ... and the absolute path of a temporary directory since removed: a run
  // that was moved is found by the basename.
  CHECK_THAT(t2t::read_file(kFixtures + "/sharded/checkpoint"), Contains("model_checkpoint_path: \"/"));
  CHECK(t2t::find_tf_checkpoint(kFixtures + "/sharded") == kFixtures + "/sharded/model.ckpt-7");

  // A prefix is itself; the index or a data file names its prefix.
  const std::string prefix = kFixtures + "/typed/" + kTypedPrefix;
  CHECK(t2t::is_tf_checkpoint(prefix));
  CHECK_FALSE(t2t::is_tf_checkpoint(prefix + "0"));
  CHECK(t2t::find_tf_checkpoint(prefix) == prefix);
  CHECK(t2t::find_tf_checkpoint(prefix + ".index") == prefix);
  CHECK(t2t::find_tf_checkpoint(prefix + ".data-00000-of-00001") == prefix);
  CHECK(t2t::find_tf_checkpoint(prefix + "0").empty());

  TempDir tmp("tf_ckpt_find");
  const fs::path dir = tmp.path;
  CHECK(t2t::find_tf_checkpoint(dir.string()).empty());  // nothing at all

  // A t2t (LibTorch) run's `checkpoint` file holds a bare name: not TF's.
  dump(tmp / "checkpoint", "model.ckpt-100.pt\n");
  dump(tmp / "model.ckpt-100.pt", "");
  CHECK(t2t::find_tf_checkpoint(dir.string()).empty());

  // Index files only: the newest by step, not by name.
  fs::remove(dir / "checkpoint");
  for (const char* f : {"model.ckpt-5.index", "model.ckpt-100.index", "model.ckpt-20.index",
                        "model.ckpt-x.index", "model.ckpt-99999999999999999999.index"})
    dump(tmp / f, "");
  CHECK(t2t::find_tf_checkpoint(dir.string()) == tmp / "model.ckpt-100");

  // A `checkpoint` file wins over the newest, and may be moved.
  copy_fixture("typed", dir);
  CHECK(t2t::find_tf_checkpoint(dir.string()) == tmp / kTypedPrefix);
  dump(tmp / "checkpoint",
       "model_checkpoint_path: \"/no/such/run/" + kTypedPrefix + "\"\n"
       "all_model_checkpoint_paths: \"/no/such/run/" + kTypedPrefix + "\"\n");
  CHECK(t2t::find_tf_checkpoint(dir.string()) == tmp / kTypedPrefix);
  dump(tmp / "checkpoint", "model_checkpoint_path: \"" + tmp / kTypedPrefix + "\"\n");
  CHECK(t2t::find_tf_checkpoint(dir.string()) == tmp / kTypedPrefix);
  dump(tmp / "checkpoint", "model_checkpoint_path: \"model.ckpt-20\"\n");
  CHECK(t2t::find_tf_checkpoint(dir.string()) == tmp / "model.ckpt-20");

  // ... but one naming a checkpoint that is not there is an error.
  dump(tmp / "checkpoint", "model_checkpoint_path: \"model.ckpt-777\"\n");
  CHECK_THAT(error_of([&] { t2t::find_tf_checkpoint(dir.string()); }),
             Contains(tmp / "checkpoint") && Contains("model.ckpt-777"));
  dump(tmp / "checkpoint", "model_checkpoint_path: \"/no/such/run/model.ckpt-777\"\n");
  CHECK_THAT(error_of([&] { t2t::find_tf_checkpoint(dir.string()); }),
             Contains(tmp / "checkpoint") && Contains("/no/such/run/model.ckpt-777"));
}

TEST_CASE("TF checkpoint: damaged files throw errors that name them", "[tf_checkpoint]") {
  TempDir tmp("tf_ckpt_damaged");
  const std::string prefix = copy_fixture("typed", tmp.path);
  const std::string index_path = prefix + ".index";
  const std::string data_path = prefix + ".data-00000-of-00001";
  const std::string index = t2t::read_file(index_path);
  const std::string data = t2t::read_file(data_path);
  auto open_error = [&] { return error_of([&] { t2t::TFCheckpointReader{prefix}; }); };

  SECTION("no index") {
    CHECK_THAT(error_of([&] { t2t::TFCheckpointReader{prefix + "0"}; }),
               Contains(prefix + "0.index") && Contains("does not exist"));
  }
  SECTION("a truncated index") {
    dump(index_path, index.substr(0, index.size() / 2));
    CHECK_THAT(open_error(), Contains(index_path) && Contains("magic"));
    dump(index_path, index.substr(0, 20));
    CHECK_THAT(open_error(), Contains(index_path) && Contains("footer"));
    dump(index_path, "");
    CHECK_THAT(open_error(), Contains(index_path));
  }
  SECTION("a flipped byte in a block") {
    std::string bad = index;
    bad[100] ^= 0x10;
    dump(index_path, bad);
    CHECK_THAT(open_error(), Contains(index_path) && Contains("CRC"));
  }
  SECTION("a wrong footer magic") {
    std::string bad = index;
    bad[bad.size() - 1] ^= 0x01;
    dump(index_path, bad);
    CHECK_THAT(open_error(), Contains(index_path) && Contains("magic"));
  }
  SECTION("an intact block that TF would not write") {
    // The data block starts with the header entry (key "", 6 bytes of
    // BundleHeaderProto: num_shards = 1, version {producer = 1}).
    const uint64_t data_size = footer_handles(index)[0] - 5;
    REQUIRE(index.substr(0, 9) == std::string("\0\0\6\x08\1\x1a\2\x08\1", 9));
    std::string bad = index;
    bad[4] = 2;  // num_shards = 2
    fix_block_crc(bad, 0, data_size);
    dump(index_path, bad);
    CHECK_THAT(open_error(), Contains(prefix + ".data-00000-of-00002") && Contains("2 shards"));
    bad.replace(3, 6, std::string("\x08\1\x10\1\x10\1", 6));  // endianness = BIG
    fix_block_crc(bad, 0, data_size);
    dump(index_path, bad);
    CHECK_THAT(open_error(), Contains(index_path) && Contains("big-endian"));
    bad = index;
    bad[data_size] = 1;  // snappy
    fix_block_crc(bad, 0, data_size);
    dump(index_path, bad);
    CHECK_THAT(open_error(), Contains(index_path) && Contains("compressed (type 1)"));
  }
  SECTION("a missing data shard") {
    fs::remove(data_path);
    CHECK_THAT(open_error(), Contains(data_path) && Contains("lacks its data shard"));
  }
  SECTION("altered tensor bytes") {
    const t2t::TFTensorEntry e = t2t::TFCheckpointReader(prefix).entry("model/float32_matrix");
    std::string bad = data;
    bad[e.offset + 5] ^= 0x01;
    dump(data_path, bad);
    const t2t::TFCheckpointReader r(prefix);  // the index is fine
    CHECK_THAT(error_of([&] { r.read_floats("model/float32_matrix"); }),
               Contains(data_path) && Contains("model/float32_matrix") && Contains("CRC"));
    CHECK(r.read_floats("model/float32_vector").size() == 5);  // the others still read
  }
  SECTION("a truncated data shard") {
    dump(data_path, data.substr(0, 100));
    const t2t::TFCheckpointReader r(prefix);
    CHECK(r.read_scalar_int("global_step") == 1234);  // before the cut
    CHECK_THAT(error_of([&] { r.read_floats("model/float64_matrix"); }),
               Contains(data_path) && Contains("model/float64_matrix") && Contains("truncated"));
  }
  SECTION("an unknown variable") {
    const t2t::TFCheckpointReader r(prefix);
    const std::string name = "transformer/body/encoder/layer_3/ffn/conv1/kernl";
    CHECK_THAT(error_of([&] { r.read_floats(name); }),
               Contains(name) && Contains(index_path) &&
                   Contains("Did you mean transformer/body/encoder/layer_3/ffn/conv1/kernel"));
    CHECK_THAT(error_of([&] { r.entry("global_step:0"); }), Contains("Did you mean global_step"));
    CHECK_FALSE(r.has(name));
  }
}

TEST_CASE("TF checkpoint: mutated indexes parse or throw t2t::Error", "[tf_checkpoint]") {
  TempDir tmp("tf_ckpt_fuzz");
  const std::string prefix = copy_fixture("typed", tmp.path);
  const std::string index_path = prefix + ".index";
  const std::string original = t2t::read_file(index_path);
  // TF wrote one data block at offset 0, then the metaindex and index blocks.
  const auto h = footer_handles(original);
  const uint64_t data_size = h[0] - 5;
  REQUIRE(h[2] + h[3] + 5 + 48 == original.size());

  std::mt19937 gen(20240611);
  auto uniform = [&](size_t n) { return static_cast<size_t>(gen() % n); };
  int parsed = 0, refused = 0;
  std::vector<std::string> failures;
  const auto start = std::chrono::steady_clock::now();
  constexpr int kMutations = 3000;
  for (int m = 0; m < kMutations; ++m) {
    std::string bad = original;
    std::string what;
    switch (m % 6) {
      case 0: case 1: {  // a few bytes flipped anywhere
        const int n = 1 + static_cast<int>(uniform(4));
        for (int i = 0; i < n; ++i) bad[uniform(bad.size())] ^= static_cast<char>(1 + uniform(255));
        what = "flipped bytes";
        break;
      }
      case 2: {  // truncated
        bad.resize(uniform(bad.size()));
        what = "truncated to " + std::to_string(bad.size());
        break;
      }
      case 3: {  // bytes inserted
        const size_t at = uniform(bad.size() + 1);
        std::string ins(1 + uniform(8), '\0');
        for (auto& c : ins) c = static_cast<char>(gen());
        bad.insert(at, ins);
        what = "inserted at " + std::to_string(at);
        break;
      }
      case 4: {  // bytes flipped inside the data block, its CRC made right again
        const int n = 1 + static_cast<int>(uniform(3));
        for (int i = 0; i < n; ++i) bad[uniform(data_size)] ^= static_cast<char>(1 << uniform(8));
        fix_block_crc(bad, 0, data_size);
        what = "data block bytes flipped, CRC fixed";
        break;
      }
      default: {  // the same in the index block
        bad[h[2] + uniform(h[3])] ^= static_cast<char>(1 << uniform(8));
        fix_block_crc(bad, h[2], h[3]);
        what = "index block byte flipped, CRC fixed";
      }
    }
    dump(index_path, bad);
    try {
      const t2t::TFCheckpointReader r(prefix);
      // Reading a few tensors checks the offsets and sizes it parsed.
      for (int i = 0; i < 3 && !r.names().empty(); ++i) {
        try {
          r.read_bytes(r.names()[uniform(r.names().size())]);
        } catch (const t2t::Error&) {
        }
      }
      ++parsed;
    } catch (const t2t::Error&) {
      ++refused;
    } catch (const std::exception& e) {
      failures.push_back("mutation " + std::to_string(m) + " (" + what + "): " + e.what());
    } catch (...) {
      failures.push_back("mutation " + std::to_string(m) + " (" + what + "): not a std::exception");
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(parsed << " parsed, " << refused << " refused in " << seconds << " s");
  CHECK(failures.empty());
  for (size_t i = 0; i < std::min<size_t>(failures.size(), 10); ++i) WARN(failures[i]);
  CHECK(parsed + refused == kMutations);
  CHECK(refused > kMutations / 2);
  CHECK(parsed > 0);  // CRC-fixed flips in values keep the index readable
}
