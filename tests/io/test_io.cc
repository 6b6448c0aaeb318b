#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "t2t/core/module_loader.h"
#include "t2t/io/archive.h"
#include "t2t/io/crc32c.h"
#include "t2t/io/download.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::file_bytes;
using t2t::test::write_text;

namespace {

// A directory of its own for each test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("t2t_test_io_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
             std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void dump(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// "0a 14 ff" -> the three bytes.
std::string hex_bytes(const std::string& hex) {
  std::string out;
  std::istringstream in(hex);
  std::string byte;
  while (in >> byte) out.push_back(static_cast<char>(std::stoi(byte, nullptr, 16)));
  return out;
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen() & 0xff);
  return s;
}

// Flips one bit of the byte at `offset` in a file.
void flip_byte(const std::string& path, size_t offset) {
  std::string data = file_bytes(path);
  REQUIRE(offset < data.size());
  data[offset] = static_cast<char>(data[offset] ^ 0x40);
  dump(path, data);
}

// Single-quoted for sh.
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Archives are made with the system's tar, gzip and zip (the test binary
// links only libt2t). tar's -P keeps '..' and leading '/' in member names,
// which the refusal tests need.
void sh(const std::string& command) {
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
}

// Packs `members` of `src` (in this order, directories not recursed into).
void make_tar_gz(const std::string& archive, const std::string& src,
                 const std::vector<std::string>& members) {
  std::string cmd = "tar --no-recursion -P -czf " + quote(archive) + " -C " + quote(src);
  for (const auto& m : members) cmd += " " + quote(m);
  sh(cmd);
}

bool have_command(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

std::string file_url(const std::string& path) { return "file://" + fs::absolute(path).string(); }

}  // namespace

// ---- CRC-32C ----------------------------------------------------------------

TEST_CASE("crc32c matches the published check values", "[io]") {
  CHECK(t2t::crc32c("123456789") == 0xE3069283u);
  CHECK(t2t::crc32c("") == 0u);
  // iSCSI's test patterns (RFC 3720, B.4).
  CHECK(t2t::crc32c(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(t2t::crc32c(std::string(32, '\xff')) == 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  CHECK(t2t::crc32c(ascending) == 0x46DD794Eu);
  CHECK(t2t::crc32c(descending) == 0x113FDB5Cu);
}

TEST_CASE("crc32c extends, and the fast path agrees with the table", "[io]") {
  const std::string hello = "hello ", world = "world";
  CHECK(t2t::crc32c_extend(t2t::crc32c(hello), world.data(), world.size()) ==
        t2t::crc32c("hello world"));
  const std::string data = random_bytes(4096 + 64, 7);
  // Every alignment and every tail length of the 8-byte loops.
  for (size_t start = 0; start < 16; ++start)
    for (size_t len : {0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096}) {
      const char* p = data.data() + start;
      REQUIRE(t2t::crc32c(p, len) == t2t::crc32c_extend_portable(0, p, len));
      uint32_t split = t2t::crc32c_extend(t2t::crc32c(p, len / 3), p + len / 3, len - len / 3);
      REQUIRE(split == t2t::crc32c(p, len));
    }
}

TEST_CASE("crc32c masking is TFRecord's", "[io]") {
  CHECK(t2t::mask_crc32c(0xE3069283u) == 0xC78AB0E5u);
  CHECK(t2t::mask_crc32c(0) == 0xA282EAD8u);
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u})
    CHECK(t2t::unmask_crc32c(t2t::mask_crc32c(c)) == c);
}

// ---- TFRecord -----------------------------------------------------------------

TEST_CASE("TFRecord bytes are TensorFlow's", "[io]") {
  TempDir dir;
  const std::string path = dir / "one.tfrecord";
  {
    t2t::TFRecordWriter w(path);
    w.write("abc");
    w.write("");
    w.close();
    CHECK(w.records_written() == 2);
    CHECK(w.bytes_written() == 19 + 16);
  }
  // length 3 | masked CRC of the length | "abc" | masked CRC of "abc",
  // then an empty record, whose payload CRC is the mask of 0.
  CHECK(file_bytes(path) == hex_bytes("03 00 00 00 00 00 00 00 b0 99 49 0e 61 62 63 6e 57 f1 21 "
                                 "00 00 00 00 00 00 00 00 29 03 98 07 d8 ea 82 a2"));
}

TEST_CASE("TFRecord round trip with empty, small and large records", "[io]") {
  TempDir dir;
  const std::string path = dir / "data.tfrecord";
  std::vector<std::string> records = {"", "x", random_bytes(3 << 20, 1), ""};
  for (int i = 0; i < 1000; ++i) records.push_back(random_bytes(i % 50, 100 + i));
  uint64_t expected_size = 0;
  {
    t2t::TFRecordWriter w(path);
    for (const auto& r : records) {
      w.write(r);
      expected_size += 16 + r.size();
    }
    w.close();
    w.close();  // closing twice is harmless
    CHECK_THROWS_WITH(w.write("late"), Contains(path) && Contains("closed"));
  }
  CHECK(fs::file_size(path) == expected_size);

  t2t::TFRecordReader reader(path);
  std::string record;
  size_t n = 0;
  uint64_t offset = 0;
  while (reader.next(&record)) {
    REQUIRE(n < records.size());
    REQUIRE(record == records[n]);
    offset += 16 + records[n].size();
    REQUIRE(reader.offset() == offset);
    ++n;
  }
  CHECK(n == records.size());
  CHECK_FALSE(reader.next(&record));  // stays at the end
  CHECK(t2t::count_tfrecords(path) == records.size());
}

TEST_CASE("a TFRecordWriter destroyed without close() still writes its records", "[io]") {
  TempDir dir;
  const std::string path = dir / "d.tfrecord";
  { t2t::TFRecordWriter(path).write("kept"); }
  t2t::TFRecordReader reader(path);
  std::string r;
  REQUIRE(reader.next(&r));
  CHECK(r == "kept");
  CHECK_FALSE(reader.next(&r));
}

TEST_CASE("an empty TFRecord file has no records", "[io]") {
  TempDir dir;
  const std::string path = dir / "empty.tfrecord";
  t2t::TFRecordWriter(path).close();
  CHECK(fs::file_size(path) == 0);
  t2t::TFRecordReader reader(path);
  std::string r;
  CHECK_FALSE(reader.next(&r));
  CHECK(t2t::count_tfrecords(path) == 0);
}

TEST_CASE("TFRecord corruption is reported with the record's offset", "[io]") {
  TempDir dir;
  const std::string path = dir / "c.tfrecord";
  // Records of 10, 20 and 30 bytes start at offsets 0, 26 and 62.
  auto write_three = [&] {
    t2t::TFRecordWriter w(path);
    w.write(std::string(10, 'a'));
    w.write(std::string(20, 'b'));
    w.write(std::string(30, 'c'));
    w.close();
  };
  std::string r;

  SECTION("a flipped payload byte") {
    write_three();
    flip_byte(path, 26 + 12 + 5);
    t2t::TFRecordReader reader(path);
    REQUIRE(reader.next(&r));
    const std::string expected =
        "corrupt TFRecord in " + path + " at byte offset 26: payload CRC mismatch";
    CHECK_THROWS_WITH(reader.next(&r), Contains(expected));
    // The reader stays failed rather than reading on from a bad position.
    CHECK_THROWS_WITH(reader.next(&r), Contains(expected));
  }
  SECTION("a flipped length byte") {
    write_three();
    flip_byte(path, 26 + 1);
    t2t::TFRecordReader reader(path);
    REQUIRE(reader.next(&r));
    CHECK_THROWS_WITH(reader.next(&r), Contains("corrupt TFRecord in " + path +
                                                " at byte offset 26: length CRC mismatch"));
    CHECK_THROWS_WITH(t2t::count_tfrecords(path), Contains("at byte offset 26"));
  }
  SECTION("a flipped payload CRC byte") {
    write_three();
    flip_byte(path, 26 + 12 + 20 + 2);
    t2t::TFRecordReader reader(path);
    REQUIRE(reader.next(&r));
    CHECK_THROWS_WITH(reader.next(&r), Contains("at byte offset 26: payload CRC mismatch"));
  }
  SECTION("a file cut in the middle of a payload") {
    write_three();
    fs::resize_file(path, 62 + 12 + 7);
    t2t::TFRecordReader reader(path);
    REQUIRE(reader.next(&r));
    REQUIRE(reader.next(&r));
    CHECK(r == std::string(20, 'b'));
    CHECK_THROWS_WITH(reader.next(&r),
                      Contains("truncated TFRecord in " + path + " at byte offset 62"));
    CHECK_THROWS_WITH(t2t::count_tfrecords(path), Contains("at byte offset 62"));
  }
  SECTION("a file cut in the middle of a header") {
    write_three();
    fs::resize_file(path, 62 + 5);
    t2t::TFRecordReader reader(path);
    REQUIRE(reader.next(&r));
    REQUIRE(reader.next(&r));
    CHECK_THROWS_WITH(reader.next(&r),
                      Contains("truncated TFRecord in " + path + " at byte offset 62"));
  }
  SECTION("a file cut just before the payload CRC") {
    write_three();
    fs::resize_file(path, 62 + 12 + 30);
    CHECK_THROWS_WITH(t2t::count_tfrecords(path), Contains("at byte offset 62"));
  }
  SECTION("a text file") {
    dump(path, "this is not a TFRecord file at all\n");
    t2t::TFRecordReader reader(path);
    CHECK_THROWS_WITH(reader.next(&r), Contains("at byte offset 0") &&
                                           Contains("not a TFRecord file"));
  }
  SECTION("a gzip-compressed file") {
    dump(path, hex_bytes("1f 8b 08 00 00 00 00 00 00 03 01 02 03 04 05 06"));
    t2t::TFRecordReader reader(path);
    CHECK_THROWS_WITH(reader.next(&r), Contains("gzip"));
  }
}

TEST_CASE("TFRecord files that cannot be opened are named", "[io]") {
  TempDir dir;
  CHECK_THROWS_WITH(t2t::TFRecordWriter(dir / "no/such/dir/x.tfrecord"),
                    Contains(dir / "no/such/dir/x.tfrecord"));
  CHECK_THROWS_WITH(t2t::TFRecordReader(dir / "missing.tfrecord"),
                    Contains(dir / "missing.tfrecord"));
}

// ---- tf.Example -------------------------------------------------------------

TEST_CASE("serialize_example writes tf.Example's wire format", "[io]") {
  // Example { features (1) { feature (1) { key (1): "inputs"
  //   value (2): Feature { int64_list (3) { value (1), packed: 1 2 300 } } } } }
  // 300 is the varint ac 02; each length counts the bytes after it.
  CHECK(t2t::serialize_example({{"inputs", {1, 2, 300}}}) ==
        hex_bytes("0a 14  0a 12  0a 06 69 6e 70 75 74 73  12 08  1a 06  0a 04 01 02 ac 02"));
  // int64 is not zigzag-encoded: -1 takes ten bytes.
  CHECK(t2t::serialize_example({{"x", {-1}}}) ==
        hex_bytes("0a 15  0a 13  0a 01 78  12 0e  1a 0c  0a 0a ff ff ff ff ff ff ff ff ff 01"));
  // An empty list is an Int64List with no field at all.
  CHECK(t2t::serialize_example({{"e", {}}}) == hex_bytes("0a 09  0a 07  0a 01 65  12 02  1a 00"));
  CHECK(t2t::serialize_example({}) == hex_bytes("0a 00"));
}

TEST_CASE("serialize_example orders features by name", "[io]") {
  // Two map entries, "inputs" before "targets" whatever the insertion order.
  t2t::Int64Features features;
  features["targets"] = {7};
  features["inputs"] = {1};
  CHECK(t2t::serialize_example(features) ==
        hex_bytes("0a 23  0a 0f  0a 06 69 6e 70 75 74 73  12 05  1a 03  0a 01 01"
                  "       0a 10  0a 07 74 61 72 67 65 74 73  12 05  1a 03  0a 01 07"));
}

TEST_CASE("parse_example round trip", "[io]") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const t2t::Int64Features features = {
      {"inputs", {5, 17, 300, 1}},
      {"targets", {kMin, -1, 0, kMax}},
      {"empty", {}},
      {"long", std::vector<int64_t>(5000, 123456789)},
  };
  CHECK(t2t::parse_example(t2t::serialize_example(features)) == features);
  CHECK(t2t::parse_example(t2t::serialize_example({})).empty());
  // Twice in a row: the reused message must not carry the first one over.
  CHECK(t2t::parse_example(t2t::serialize_example({{"a", {1}}})) ==
        t2t::Int64Features{{"a", {1}}});
}

TEST_CASE("parse_example reads what other writers produce", "[io]") {
  // The same list unpacked (one tag per value), as older writers emit it.
  CHECK(t2t::parse_example(hex_bytes("0a 0d  0a 0b  0a 01 61  12 06  1a 04  08 05 08 06")) ==
        t2t::Int64Features{{"a", {5, 6}}});
  // A Feature with no list set reads as empty.
  CHECK(t2t::parse_example(hex_bytes("0a 07  0a 05  0a 01 61  12 00")) ==
        t2t::Int64Features{{"a", {}}});
}

TEST_CASE("parse_example rejects non-int64 features and garbage", "[io]") {
  // "a": int64_list [1], "scores": float_list (field 2) [0.5f].
  CHECK_THROWS_WITH(
      t2t::parse_example(hex_bytes("0a 20  0a 0a  0a 01 61  12 05  1a 03  0a 01 01"
                                   "       0a 12  0a 06 73 63 6f 72 65 73  12 08"
                                   "              12 06  0a 04 00 00 00 3f")),
      Contains("'scores'") && Contains("float_list"));
  // "text": bytes_list (field 1) ["hi"].
  CHECK_THROWS_WITH(
      t2t::parse_example(hex_bytes("0a 10  0a 0e  0a 04 74 65 78 74  12 06  0a 04  0a 02 68 69")),
      Contains("'text'") && Contains("bytes_list"));
  // A length running past the end.
  CHECK_THROWS_WITH(t2t::parse_example(hex_bytes("0a 14 0a 12 ff ff")),
                    Contains("cannot parse a tf.Example"));
}

// ---- archives ---------------------------------------------------------------

TEST_CASE("extract_archive unpacks a tar.gz", "[io]") {
  TempDir dir;
  const std::string src = dir / "src", dest = dir / "out";
  const std::string big = "beta\n" + random_bytes(100000, 5);
  write_text(src + "/data/a.txt", "alpha");
  write_text(src + "/data/sub/b.txt", big);
  write_text(src + "/c.txt", "");
  fs::create_directories(src + "/data/empty");
  make_tar_gz(dir / "test.tar.gz", src,
              {"data", "data/a.txt", "data/empty", "data/sub", "data/sub/b.txt", "./c.txt"});
  const auto files = t2t::extract_archive(dir / "test.tar.gz", dest);
  CHECK(files == std::vector<std::string>{"data/a.txt", "data/sub/b.txt", "c.txt"});
  CHECK(file_bytes(dest + "/data/a.txt") == "alpha");
  CHECK(file_bytes(dest + "/data/sub/b.txt") == big);
  CHECK(fs::is_directory(dest + "/data/empty"));
  CHECK(fs::is_regular_file(dest + "/c.txt"));
  CHECK(fs::file_size(dest + "/c.txt") == 0);
  // Nothing but the files: no temporaries left over.
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dest)) n += e.is_regular_file();
  CHECK(n == 3);
}

TEST_CASE("extract_archive unpacks a zip", "[io]") {
  if (!have_command("zip")) T2T_SKIP("no zip command (tools/setup.sh installs it)");
  TempDir dir;
  write_text(dir / "src/z/one.txt", "one");
  write_text(dir / "src/two.txt", "two");
  sh("cd " + quote(dir / "src") + " && zip -q -r ../t.zip z two.txt");
  auto files = t2t::extract_archive(dir / "t.zip", dir / "out");
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<std::string>{"two.txt", "z/one.txt"});
  CHECK(file_bytes(dir / "out/z/one.txt") == "one");
  CHECK(file_bytes(dir / "out/two.txt") == "two");
}

TEST_CASE("extract_archive refuses entries outside the destination", "[io]") {
  TempDir dir;
  const std::string src = dir / "src", dest = dir / "out";
  write_text(src + "/ok.txt", "fine");
  SECTION("a '..' entry") {
    write_text(dir / "evil", "gotcha");
    make_tar_gz(dir / "evil.tar.gz", src, {"ok.txt", "../evil"});
    fs::remove(dir / "evil");
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "evil.tar.gz", dest),
                      Contains("'../evil'") && Contains(dir / "evil.tar.gz"));
    CHECK_FALSE(fs::exists(dir / "evil"));
  }
  SECTION("a '..' in the middle") {
    write_text(dir / "evil", "gotcha");
    write_text(src + "/a/.keep", "");
    make_tar_gz(dir / "evil.tar.gz", src, {"a/../../evil"});
    fs::remove(dir / "evil");
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "evil.tar.gz", dest), Contains("a/../../evil"));
    CHECK_FALSE(fs::exists(dir / "evil"));
  }
  SECTION("an absolute path") {
    const std::string target = dir / "absolute_evil";
    write_text(target, "gotcha");
    make_tar_gz(dir / "evil.tar.gz", src, {target});
    fs::remove(target);
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "evil.tar.gz", dest), Contains(target));
    CHECK_FALSE(fs::exists(target));
  }
  SECTION("symbolic links") {
    fs::create_symlink("ok.txt", src + "/good");
    fs::create_symlink("../outside", src + "/bad");
    fs::create_symlink("/etc/passwd", src + "/worse");
    make_tar_gz(dir / "links.tar.gz", src, {"ok.txt", "good", "bad", "worse"});
    const auto files = t2t::extract_archive(dir / "links.tar.gz", dest);
    CHECK(files == std::vector<std::string>{"ok.txt", "good"});
    CHECK(fs::is_symlink(dest + "/good"));
    CHECK(file_bytes(dest + "/good") == "fine");
    CHECK_FALSE(fs::exists(fs::symlink_status(dest + "/bad")));
    CHECK_FALSE(fs::exists(fs::symlink_status(dest + "/worse")));
  }
}

TEST_CASE("extract_archive reports damaged and missing archives", "[io]") {
  TempDir dir;
  const std::string dest = dir / "out";
  SECTION("random bytes") {
    dump(dir / "junk.tar.gz", random_bytes(5000, 9));
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "junk.tar.gz", dest),
                      Contains(dir / "junk.tar.gz") && Contains("download it again"));
  }
  SECTION("a truncated tar.gz") {
    write_text(dir / "src/big.bin", random_bytes(200000, 11));
    make_tar_gz(dir / "full.tar.gz", dir / "src", {"big.bin"});
    const std::string data = file_bytes(dir / "full.tar.gz");
    dump(dir / "cut.tar.gz", data.substr(0, data.size() / 2));
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "cut.tar.gz", dest),
                      Contains(dir / "cut.tar.gz") && Contains("download it again"));
    // No half-written file under the final name, and no temporary left.
    CHECK_FALSE(fs::exists(dest + "/big.bin"));
    CHECK(fs::is_empty(dest));
  }
  SECTION("an empty file") {
    dump(dir / "empty.zip", "");
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "empty.zip", dest), Contains("empty"));
  }
  SECTION("no file") {
    CHECK_THROWS_WITH(t2t::extract_archive(dir / "none.tgz", dest), Contains(dir / "none.tgz"));
  }
}

TEST_CASE("maybe_extract_archive extracts once", "[io]") {
  TempDir dir;
  const std::string archive = dir / "a.tar.gz", dest = dir / "out";
  write_text(dir / "src/x.txt", "x");
  write_text(dir / "src/d/y.txt", "y");
  make_tar_gz(archive, dir / "src", {"x.txt", "d/y.txt"});
  const std::vector<std::string> expected = {"x.txt", "d/y.txt"};
  CHECK(t2t::maybe_extract_archive(archive, dest) == expected);
  CHECK(fs::exists(t2t::extraction_marker_path(archive, dest)));
  // A second call leaves the files alone: a local change survives.
  dump(dest + "/x.txt", "changed");
  CHECK(t2t::maybe_extract_archive(archive, dest) == expected);
  CHECK(file_bytes(dest + "/x.txt") == "changed");
  // A missing file brings the extraction back.
  fs::remove(dest + "/d/y.txt");
  CHECK(t2t::maybe_extract_archive(archive, dest) == expected);
  CHECK(file_bytes(dest + "/d/y.txt") == "y");
  CHECK(file_bytes(dest + "/x.txt") == "x");
}

TEST_CASE("extract_archive_member extracts one file", "[io]") {
  TempDir dir;
  const std::string archive = dir / "m.tar.gz";
  write_text(dir / "src/corpus/train.en", "hello\n");
  write_text(dir / "src/corpus/train.zh", "ni hao\n");
  make_tar_gz(archive, dir / "src", {"corpus/train.en", "corpus/train.zh"});
  t2t::extract_archive_member(archive, "corpus/train.zh", dir / "out/zh.txt");
  CHECK(file_bytes(dir / "out/zh.txt") == "ni hao\n");
  t2t::extract_archive_member(archive, "./corpus/train.en", dir / "en.txt");
  CHECK(file_bytes(dir / "en.txt") == "hello\n");
  CHECK_THROWS_WITH(t2t::extract_archive_member(archive, "corpus/train.de", dir / "de.txt"),
                    Contains("'corpus/train.de'") && Contains(archive) &&
                        Contains("did you mean"));
  CHECK_FALSE(fs::exists(dir / "de.txt"));
}

TEST_CASE("decompress_file gunzips a single file", "[io]") {
  TempDir dir;
  const std::string content = "line one\nline two\n" + random_bytes(50000, 13);
  dump(dir / "f.txt", content);
  sh("gzip " + quote(dir / "f.txt"));
  REQUIRE(fs::exists(dir / "f.txt.gz"));
  t2t::decompress_file(dir / "f.txt.gz", dir / "out/f.txt");
  CHECK(file_bytes(dir / "out/f.txt") == content);
}

TEST_CASE("archives are read by a module loaded on first use", "[io]") {
  // libarchive (with libxml2 and ICU under it) is not linked into libt2t.
  // The module sits beside libt2t.so; one that cannot be loaded is an error
  // naming the file and what it is for.
  const std::string dir = t2t::libt2t_directory();
  CHECK(fs::exists(fs::path(dir) / "libt2t_archive.so"));
  CHECK_THROWS_WITH(t2t::load_module("libt2t_absent.so", "a module for this test"),
                    Contains(dir + "/libt2t_absent.so") && Contains("a module for this test"));
  void* module = t2t::load_module("libt2t_archive.so", "archives");
  CHECK(module == t2t::load_module("libt2t_archive.so", "archives"));
  CHECK_THROWS_WITH(t2t::module_symbol(module, "libt2t_archive.so", "no_such_symbol"),
                    Contains("no_such_symbol") && Contains("different builds"));
}

// ---- downloads --------------------------------------------------------------

TEST_CASE("maybe_download fetches a file:// URL once", "[io]") {
  TempDir dir;
  const std::string src = dir / "source.bin";
  const std::string content = random_bytes(300000, 17);
  dump(src, content);
  const std::string out_dir = dir / "downloads";
  const std::string path = t2t::maybe_download(out_dir, "data.bin", file_url(src));
  CHECK(path == (fs::path(out_dir) / "data.bin").string());
  CHECK(file_bytes(path) == content);
  CHECK_FALSE(fs::exists(path + ".part"));
  // The second call must not read the source: it is gone now.
  fs::remove(src);
  CHECK(t2t::maybe_download(out_dir, "data.bin", file_url(src)) == path);
  CHECK(file_bytes(path) == content);
}

TEST_CASE("maybe_download resumes or restarts a partial download", "[io]") {
  TempDir dir;
  const std::string src = dir / "source.bin";
  const std::string content = random_bytes(100000, 19);
  dump(src, content);
  t2t::DownloadOptions quick;
  quick.backoff_seconds = 0;
  const std::string out_dir = dir.path().string();
  SECTION("a .part that is a prefix is continued") {
    dump(dir / "f.bin.part", content.substr(0, 40000));
    const std::string path = t2t::maybe_download(out_dir, "f.bin", file_url(src), quick);
    CHECK(file_bytes(path) == content);
  }
  SECTION("a .part longer than the file is discarded") {
    dump(dir / "f.bin.part", random_bytes(150000, 23));
    const std::string path = t2t::maybe_download(out_dir, "f.bin", file_url(src), quick);
    CHECK(file_bytes(path) == content);
  }
}

TEST_CASE("maybe_download failures say how to get the file by hand", "[io]") {
  TempDir dir;
  const std::string url = file_url(dir / "no_such_file.tgz");
  const std::string expected_path = (dir.path() / "dl" / "corpus.tgz").string();
  CHECK_THROWS_WITH(t2t::maybe_download(dir / "dl", "corpus.tgz", url),
                    Contains(url) && Contains("by hand") && Contains(expected_path));
  CHECK_FALSE(fs::exists(expected_path));
  CHECK_FALSE(fs::exists(expected_path + ".part"));
  CHECK_THROWS_WITH(t2t::maybe_download(dir / "dl", "x.tgz", ""), Contains("by hand"));
  CHECK_THROWS_WITH(t2t::maybe_download(dir / "dl", "x.tgz", "nosuchscheme://host/x.tgz"),
                    Contains("nosuchscheme://host/x.tgz"));
}
