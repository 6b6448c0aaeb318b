// Checkpoints from elsewhere (t2t/checkpoint/mapped_archive.h): LibTorch's
// own loader runs the TorchScript a file carries and sizes each tensor's
// storage by the pickle; t2t's reader runs nothing of the file, takes each
// record as its tensor's storage and checks the tensor fits, and still
// restores a run exactly (test_checkpoint.cc).
// LibTorch first: its logging header defines CHECK too, and Catch's CHECK
// must be the one that wins.
#include <torch/torch.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/checkpoint/mapped_archive.h"
#include "t2t/checkpoint/pickle_check.h"
#include "t2t/core/error.h"
#include "tests/support/test_util.h"

using t2t::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct TinyNet : torch::nn::Module {
  TinyNet() { fc = register_module("fc", torch::nn::Linear(3, 2)); }
  torch::nn::Linear fc{nullptr};
};

// A run's checkpoint: the tiny net after one Adam step, with its
// optimizer's state. Returns its path.
std::string write_run_checkpoint(const std::string& dir) {
  torch::manual_seed(3);
  TinyNet net;
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(0.1));
  opt.zero_grad();
  net.fc->forward(torch::ones({4, 3})).pow(2).sum().backward();
  opt.step();
  t2t::CheckpointMeta meta;
  meta.step = 1;
  meta.reader_state = "epoch 0";
  return t2t::save_checkpoint(dir, net, &opt, meta, 0);
}

// Copies the archive `from` into `to` with record `name` cut to `keep`
// bytes: the pickle still gives the tensor its full shape.
void copy_with_record_cut(const std::string& from, const std::string& to,
                          const std::string& name, size_t keep) {
  caffe2::serialize::PyTorchStreamReader reader(from);
  caffe2::serialize::PyTorchStreamWriter writer(to);
  for (const std::string& record : reader.getAllRecords()) {
    // What the writer writes itself.
    if (writer.getAllWrittenRecords().count(record) || record == ".data/version" ||
        record == "version" || record == ".data/serialization_id")
      continue;
    auto [data, size] = reader.getRecord(record);
    writer.writeRecord(record, data.get(), record == name ? std::min(keep, size) : size);
  }
  writer.writeEndOfFile();
}

}  // namespace

TEST_CASE("a checkpoint's TorchScript is never run by t2t's reader", "[checkpoint][untrusted]") {
  // Written by make_fixture.py beside it, which checks that LibTorch's own
  // loader (torch.jit.load, as torch::load and InputArchive) runs the
  // __setstate__ of the class the file defines for its "optimizer".
  const std::string path = (fs::path(t2t::test::source_dir()) / "tests" / "fixtures" /
                            "untrusted_checkpoint" / "scripted_setstate.pt").string();
  caffe2::serialize::PyTorchStreamReader zip(path);
  auto [code, size] = zip.getRecord("code/__torch__.py");
  const std::string source(static_cast<const char*>(code.get()), size);
  REQUIRE_THAT(source, Catch::Contains("def __setstate__") &&
                           Catch::Contains("own TorchScript ran"));

  // Decoding reads the tensors alone; the nested object is never built.
  const auto tensors = t2t::read_mapped_archive(path);
  CHECK(tensors.size() == 1);
  CHECK(torch::equal(tensors.at("w"), torch::ones({2, 3})));

  // Resuming needs the optimizer's archive: the object is refused as no
  // archive of named values, and nothing of it runs.
  TinyNet net;
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(0.1));
  for (bool resume : {false, true}) {
    INFO((resume ? "load_checkpoint" : "read_mapped_archive"));
    try {
      t2t::NestedArchives nested;
      if (resume)
        t2t::load_checkpoint(path, net, &opt, false);
      else
        t2t::read_mapped_archive(path, &nested);
      FAIL("the checkpoint was taken");
    } catch (const t2t::Error& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::Contains("scripted_setstate.pt") && Catch::Contains("'optimizer'"));
      CHECK_THAT(what, !Catch::Contains("TorchScript ran"));
    }
  }
}

TEST_CASE("a tensor whose shape reaches past its record is refused", "[checkpoint][untrusted]") {
  TempDir dir("untrusted_shape");
  t2t::TensorMap tensors;
  tensors["w"] = torch::arange(1000, torch::kFloat);
  const std::string path = t2t::save_checkpoint_tensors(dir / "run", tensors, {});
  // The record holding w's 4000 bytes.
  caffe2::serialize::PyTorchStreamReader reader(path);
  std::string record;
  for (const std::string& name : reader.getAllRecords())
    if (name.rfind("data/", 0) == 0 && reader.getRecordSize(name) == 4000) record = name;
  REQUIRE(!record.empty());
  const std::string cut = dir / "cut.pt";
  copy_with_record_cut(path, cut, record, 64);
  // LibTorch's loader sizes the storage by the pickle, over the record's 64
  // bytes: reading the tensor would read past its memory.
  auto loaded = torch::jit::load(cut);
  CHECK(loaded.attr("model/w").toTensor().numel() == 1000);
  CHECK(loaded.attr("model/w").toTensor().storage().nbytes() == 4000);
  // t2t's storages are the records themselves, so the tensor does not fit
  // and is refused: by the check recent LibTorch makes of a shape against
  // the storage it is given, else by t2t's own.
  REQUIRE_THROWS_WITH(t2t::read_checkpoint_tensors(cut, nullptr),
                      Catch::Contains("cut.pt") &&
                          (Catch::Contains("reaches past its record") ||
                           Catch::Contains("require a storage of at least")));
  TinyNet net;
  REQUIRE_THROWS_WITH(t2t::load_checkpoint(cut, net, nullptr, false),
                      Catch::Contains("cut.pt") &&
                          (Catch::Contains("reaches past its record") ||
                           Catch::Contains("require a storage of at least")));
}

TEST_CASE("a run's checkpoint resumes through the rebuilt optimizer archive",
          "[checkpoint][untrusted]") {
  TempDir dir("untrusted_resume");
  const std::string path = write_run_checkpoint(dir / "run");
  t2t::NestedArchives nested;
  const auto tensors = t2t::read_mapped_archive(path, &nested);
  CHECK(tensors.count("model/fc.weight"));
  REQUIRE(nested.count("optimizer"));
  // What LibTorch's loader reads from the file, the rebuilt archive holds.
  torch::serialize::InputArchive original;
  original.load_from(path);
  torch::serialize::InputArchive from_file;
  REQUIRE(original.try_read("optimizer", from_file));
  CHECK(nested.at("optimizer")->keys() == from_file.keys());
  TinyNet a, b;
  torch::optim::Adam opt_a(a.parameters(), torch::optim::AdamOptions(0.1));
  torch::optim::Adam opt_b(b.parameters(), torch::optim::AdamOptions(0.1));
  opt_a.load(from_file);
  opt_b.load(*nested.at("optimizer"));
  // The state is keyed by each optimizer's own parameters.
  const auto& params_a = opt_a.param_groups().at(0).params();
  const auto& params_b = opt_b.param_groups().at(0).params();
  REQUIRE(params_a.size() == 2);
  REQUIRE(opt_b.state().size() == 2);
  for (size_t i = 0; i < params_a.size(); ++i) {
    auto key = [](const torch::Tensor& p) { return p.unsafeGetTensorImpl(); };
    const auto& sa =
        static_cast<const torch::optim::AdamParamState&>(*opt_a.state().at(key(params_a[i])));
    const auto& sb =
        static_cast<const torch::optim::AdamParamState&>(*opt_b.state().at(key(params_b[i])));
    CHECK(sa.step() == sb.step());
    CHECK(torch::equal(sa.exp_avg(), sb.exp_avg()));
    CHECK(torch::equal(sa.exp_avg_sq(), sb.exp_avg_sq()));
  }
}

TEST_CASE("the checkpoint harness's seeds are checkpoints t2t resumes from",
          "[checkpoint][untrusted]") {
  const fs::path seeds = fs::path(t2t::test::source_dir()) / "fuzz" / "corpus" / "checkpoint";
  REQUIRE(fs::is_directory(seeds));
  int n = 0;
  for (const auto& entry : fs::directory_iterator(seeds)) {
    INFO(entry.path());
    TinyNet net;
    torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(0.1));
    CHECK(t2t::load_checkpoint(entry.path().string(), net, &opt, false).step == 1);
    ++n;
  }
  CHECK(n > 0);
}

TEST_CASE("a pickle's lengths and memo indices are checked before LibTorch reads it",
          "[checkpoint][untrusted]") {
  // A run's own pickle passes.
  TempDir dir("untrusted_pickle");
  caffe2::serialize::PyTorchStreamReader zip(write_run_checkpoint(dir / "run"));
  auto [data, size] = zip.getRecord("data.pkl");
  const std::string pickle(static_cast<const char*>(data.get()), size);
  CHECK_NOTHROW(t2t::check_pickle(pickle, "data.pkl"));
  // PROTO 2, then an opcode, then STOP.
  auto with = [](const std::string& op) { return std::string("\x80\x02", 2) + op + "."; };
  CHECK_NOTHROW(t2t::check_pickle(with(std::string("X\x03\0\0\0abc", 8)), "p"));
  CHECK_NOTHROW(t2t::check_pickle(with(std::string("]q\0h\0", 5)), "p"));
  // BINUNICODE claiming 1.7 GB: LibTorch would reserve it before reading.
  REQUIRE_THROWS_WITH(
      t2t::check_pickle(with(std::string("X\x0d\x7f\x76\x65" "abc", 8)), "data.pkl"),
      Catch::Contains("data.pkl") && Catch::Contains("byte 2") &&
          Catch::Contains("length of 1702264589 bytes"));
  REQUIRE_THROWS_WITH(
      t2t::check_pickle(with(std::string("\x8d\xff\xff\xff\xff\xff\xff\xff\xff", 9)), "p"),
      Catch::Contains("bytes with"));
  REQUIRE_THROWS_WITH(t2t::check_pickle(with("]r\xff\xff\xff\x7f"), "p"),
                      Catch::Contains("memo index 2147483647"));
  REQUIRE_THROWS_WITH(t2t::check_pickle(with("\xfe"), "p"),
                      Catch::Contains("no pickle opcode 254"));
  REQUIRE_THROWS_WITH(t2t::check_pickle(with("cmodule"), "p"), Catch::Contains("without its end"));
  REQUIRE_THROWS_WITH(t2t::check_pickle(std::string("\x80\x02N", 3), "p"),
                      Catch::Contains("without STOP"));
  REQUIRE_THROWS_WITH(t2t::check_pickle(std::string("\x80", 1), "p"),
                      Catch::Contains("cut short"));
}

// Not a test: writes the seeds of fuzz/torch/checkpoint.cc into the folder
// named by T2T_FUZZ_SEED_DIR (fuzz/make_corpus.py runs it).
TEST_CASE("write the checkpoint harness's seeds", "[.write-fuzz-seeds]") {
  const char* out = std::getenv("T2T_FUZZ_SEED_DIR");
  REQUIRE(out != nullptr);
  TempDir dir("fuzz_seed");
  const std::string path = write_run_checkpoint(dir / "run");
  fs::create_directories(out);
  fs::copy_file(path, fs::path(out) / "adam_run.pt", fs::copy_options::overwrite_existing);
}
