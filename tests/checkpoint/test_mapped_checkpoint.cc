// Checkpoints read in place (t2t/checkpoint/mapped_archive.h over
// t2t/io/mapped_file.h): the same tensors as LibTorch's own reader, the
// file never written, pages given back with their tensor, and damaged or
// re-packed files handled.
// LibTorch first: its logging header defines CHECK too, and Catch's CHECK
// must be the one that wins.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/checkpoint/mapped_archive.h"
#include "t2t/core/error.h"
#include "t2t/io/mapped_file.h"
#include "tests/support/test_util.h"

using t2t::test::file_bytes;
using t2t::test::TempDir;

namespace {

// Resident KiB of this process's mappings of `path` (/proc/self/smaps).
int64_t resident_kib(const std::string& path) {
  const std::string name = std::filesystem::canonical(path).string();
  std::ifstream smaps("/proc/self/smaps");
  int64_t total = 0;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first.empty()) continue;
    if (first.back() != ':') {  // a mapping's own line: range, flags, ..., path
      inside = line.size() >= name.size() &&
               line.compare(line.size() - name.size(), name.size(), name) == 0;
    } else if (inside && first == "Rss:") {
      int64_t kib = 0;
      fields >> kib;
      total += kib;
    }
  }
  return total;
}

// The path of the mapped file whose name holds `name` (/proc/self/maps).
std::string mapped_path(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find(name, slash) != std::string::npos)
      return line.substr(slash);
  }
  return "";
}

// A checkpoint of a few named tensors, one of `big` floats.
std::string write_checkpoint(const TempDir& dir, int64_t big = 1 << 20) {
  torch::manual_seed(5);
  t2t::TensorMap tensors;
  tensors["big.weight"] = torch::randn({big / 1024, 1024});
  tensors["small.bias"] = torch::randn({7});
  tensors["ids"] = torch::arange(5, torch::kLong);
  tensors["codes"] = torch::randint(-128, 127, {33, 17}, torch::kChar);
  t2t::CheckpointMeta meta;
  meta.step = 42;
  meta.hparams_yaml = "hidden_size: 8\n";
  return t2t::save_checkpoint_tensors(dir / "run", tensors, meta);
}

}  // namespace

TEST_CASE("a checkpoint read in place holds what LibTorch's reader reads", "[checkpoint]") {
  TempDir dir("mapped_same");
  const std::string path = write_checkpoint(dir);
  t2t::CheckpointMeta meta;
  const auto mapped = t2t::read_checkpoint_tensors(path, &meta);
  CHECK(meta.step == 42);
  CHECK(meta.hparams_yaml == "hidden_size: 8\n");
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  REQUIRE(mapped.size() == 4);
  for (const auto& [name, tensor] : mapped) {
    INFO(name);
    torch::Tensor want;
    REQUIRE(archive.try_read("model/" + name, want));
    CHECK(tensor.scalar_type() == want.scalar_type());
    CHECK(torch::equal(tensor, want));
  }
  // Each tensor's memory is its record in the file, aligned for any type.
  const auto& big = mapped.at("big.weight");
  CHECK(reinterpret_cast<uintptr_t>(big.data_ptr()) % 64 == 0);
  CHECK(resident_kib(path) > 0);
}

TEST_CASE("a tensor read in place is written to as a copy, never to the file",
          "[checkpoint]") {
  TempDir dir("mapped_cow");
  const std::string path = write_checkpoint(dir);
  const std::string before = file_bytes(path);
  {
    auto tensors = t2t::read_checkpoint_tensors(path, nullptr);
    tensors.at("big.weight").mul_(2).add_(1);
    tensors.at("codes").zero_();
    CHECK(tensors.at("codes").abs().sum().item<int64_t>() == 0);
  }
  CHECK(file_bytes(path) == before);
  const auto again = t2t::read_checkpoint_tensors(path, nullptr);
  CHECK(again.at("codes").abs().sum().item<int64_t>() > 0);
}

TEST_CASE("a tensor read in place leaves memory with its last reference", "[checkpoint]") {
  TempDir dir("mapped_release");
  const std::string path = write_checkpoint(dir, 4 << 20);  // 16 MiB of floats
  auto tensors = t2t::read_checkpoint_tensors(path, nullptr);
  auto small = tensors.at("small.bias");  // keeps the mapping itself alive
  CHECK(tensors.at("big.weight").sum().item<double>() != 0);  // every page read
  CHECK(resident_kib(path) >= 16 * 1024);
  tensors.clear();
  // Only the pages at the big record's two ends may stay, shared with
  // its neighbours.
  CHECK(resident_kib(path) < 1024);
  CHECK(small.size(0) == 7);
}

TEST_CASE("a damaged or truncated checkpoint is refused naming the file", "[checkpoint]") {
  TempDir dir("mapped_damaged");
  const std::string path = write_checkpoint(dir);
  REQUIRE_THROWS_WITH(t2t::read_checkpoint_tensors(dir / "run/none.pt", nullptr),
                      Catch::Contains("no checkpoint at") && Catch::Contains("none.pt"));
  const std::string bytes = file_bytes(path);
  const std::string cut = dir / "cut.pt";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  REQUIRE_THROWS_WITH(t2t::read_checkpoint_tensors(cut, nullptr),
                      Catch::Contains("cannot read checkpoint") && Catch::Contains("cut.pt"));
  const std::string garbage = dir / "garbage.pt";
  std::ofstream(garbage) << "not a zip";
  REQUIRE_THROWS_WITH(t2t::read_checkpoint_tensors(garbage, nullptr),
                      Catch::Contains("cannot read checkpoint") && Catch::Contains("garbage.pt"));
  const std::string empty = dir / "empty.pt";
  std::ofstream{empty};
  REQUIRE_THROWS_WITH(t2t::read_checkpoint_tensors(empty, nullptr),
                      Catch::Contains("cannot read checkpoint") && Catch::Contains("empty.pt"));
}

TEST_CASE("a checkpoint re-packed with compression is read through copies", "[checkpoint]") {
  if (std::system("python3 -c 'import zipfile' >/dev/null 2>&1") != 0)
    T2T_SKIP("no python3 to re-pack a zip file with");
  TempDir dir("mapped_deflated");
  const std::string path = write_checkpoint(dir);
  const std::string packed = dir / "deflated.pt";
  const std::string command =
      "python3 -c \"import sys, zipfile\n"
      "src = zipfile.ZipFile(sys.argv[1])\n"
      "with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as out:\n"
      "    [out.writestr(i, src.read(i)) for i in src.infolist()]\" '" + path + "' '" + packed + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const auto want = t2t::read_checkpoint_tensors(path, nullptr);
  const auto got = t2t::read_checkpoint_tensors(packed, nullptr);
  REQUIRE(got.size() == want.size());
  for (const auto& [name, tensor] : want) CHECK(torch::equal(got.at(name), tensor));
}

TEST_CASE("a mapped file refuses a span beyond its end", "[checkpoint]") {
  TempDir dir("mapped_span");
  const std::string path = dir / "bytes";
  std::ofstream(path, std::ios::binary) << std::string(100, 'x');
  const auto file = t2t::MappedFile::open(path);
  CHECK(file->size() == 100);
  CHECK(file->share(90, 10).get() == file->data() + 90);
  CHECK_THROWS_WITH(file->share(90, 11), Catch::Contains("bytes") && Catch::Contains("truncated"));
  CHECK_THROWS_WITH(t2t::MappedFile::open(dir / "missing"), Catch::Contains("missing"));
}

TEST_CASE("a mapped tensor's pages are given back while it stays readable, unless written",
          "[checkpoint]") {
  TempDir dir("mapped_give_back");
  const std::string path = write_checkpoint(dir, 4 << 20);  // 16 MiB of floats
  auto tensors = t2t::read_checkpoint_tensors(path, nullptr);
  const auto big = tensors.at("big.weight");
  const double sum = big.sum().item<double>();
  CHECK(resident_kib(path) >= 16 * 1024);
  CHECK(t2t::give_back_pages(big));
  CHECK(resident_kib(path) < 1024);
  CHECK(big.sum().item<double>() == sum);  // read from the file again
  CHECK(resident_kib(path) >= 16 * 1024);

  // Written in place, its pages are its own: kept, with what was written.
  big.narrow(0, 100, 1).fill_(3.0f);
  const double written = big.sum().item<double>();
  CHECK_FALSE(t2t::give_back_pages(big));
  CHECK(big.sum().item<double>() == written);
  CHECK_FALSE(t2t::give_back_pages(torch::ones({1 << 20})));  // not in a file
  CHECK_FALSE(t2t::give_back_pages(torch::Tensor()));
}

TEST_CASE("the libraries' unwritten pages are given back, and pages written before a mapping became "
          "read-only stay",
          "[checkpoint]") {
  // A read-only private mapping with one page written before it became
  // read-only, as the loader leaves a library's relocated constants, and
  // one page only read.
  TempDir dir("library_pages");
  const std::string path = dir / "libpages.so";  // a library, as far as the name goes
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::ofstream(path, std::ios::binary) << std::string(2 * page, 'f');
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  auto* bytes = static_cast<char*>(
      ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  ::close(fd);
  REQUIRE(bytes != MAP_FAILED);
  bytes[0] = 'w';
  volatile char read = bytes[page];
  (void)read;
  REQUIRE(::mprotect(bytes, 2 * page, PROT_READ) == 0);
  CHECK(resident_kib(path) == static_cast<int64_t>(2 * page / 1024));

  // LibTorch's start-up left code of its own resident.
  const std::string torch_library = mapped_path("libtorch_cpu.so");
  REQUIRE_FALSE(torch_library.empty());
  const int64_t torch_code = resident_kib(torch_library);
  CHECK(torch_code > 4096);
  const size_t given = t2t::give_back_library_pages();
  CHECK(given > 4096u * 1024u);
  CHECK(resident_kib(torch_library) < torch_code / 2);

  // The written page keeps what was written; the other left, and reads as
  // the file.
  CHECK(resident_kib(path) == static_cast<int64_t>(page / 1024));
  CHECK(bytes[0] == 'w');
  CHECK(bytes[page] == 'f');
  ::munmap(bytes, 2 * page);

  // And LibTorch runs on, its code read again as it is used.
  const auto a = torch::arange(12, torch::kFloat).reshape({3, 4});
  CHECK(torch::matmul(a, a.t()).sum().item<float>() == 1134.0f);
}
