// The TensorFlow checkpoint writer: what it writes reads back through t2t's
// reader byte for byte (real TensorFlow's checkpoints rewritten, every
// dtype), and, where a Python with TensorFlow is at hand ($T2T_TF_PYTHON),
// through TensorFlow itself. Averaging T2T checkpoints into one
// (t2t-avg-all on a T2T run) is tested end to end here too.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "t2t/checkpoint/average.h"
#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/io/sstable.h"
#include "t2t/io/tf_checkpoint.h"
#include "t2t/io/tf_checkpoint_writer.h"
#include "tests/support/t2t_fixture.h"
#include "tests/support/test_util.h"

namespace fs = std::filesystem;
using Catch::Contains;
using t2t::test::run_command;
using t2t::test::TempDir;

namespace {

const std::string kTyped =
    t2t::test::source_dir() + "/tests/fixtures/tf_checkpoint/typed/model.ckpt-1234";

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const t2t::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("TF checkpoint writer: TensorFlow's tensors written again read back the same",
          "[tf_checkpoint]") {
  TempDir dir("tf_writer");
  const t2t::TFCheckpointReader tf(kTyped);
  const std::string prefix = dir / "out/model.ckpt-1234";
  {
    t2t::TFCheckpointWriter w(prefix);
    for (const std::string& name : tf.names()) {
      const auto& e = tf.entry(name);
      if (e.dtype == static_cast<int>(t2t::TFDType::kString)) continue;  // not written
      w.add(name, static_cast<t2t::TFDType>(e.dtype), e.shape, tf.read_bytes(name));
    }
    // Nothing is visible before finish().
    CHECK_FALSE(fs::exists(prefix + ".index"));
    w.finish();
  }
  const t2t::TFCheckpointReader ours(prefix);
  size_t compared = 0;
  for (const std::string& name : tf.names()) {
    if (tf.entry(name).dtype == static_cast<int>(t2t::TFDType::kString)) {
      CHECK_FALSE(ours.has(name));
      continue;
    }
    INFO(name);
    REQUIRE(ours.has(name));
    CHECK(ours.entry(name).dtype == tf.entry(name).dtype);
    CHECK(ours.entry(name).shape == tf.entry(name).shape);
    CHECK(ours.read_bytes(name) == tf.read_bytes(name));
    ++compared;
  }
  CHECK(compared + 1 == tf.names().size());
  CHECK(ours.read_scalar_int("global_step") == 1234);
  // No temporary file is left behind.
  size_t files = 0;
  for (const auto& f : fs::directory_iterator(dir / "out")) {
    INFO(f.path().string());
    CHECK(f.path().filename().string().rfind("model.ckpt-1234.", 0) == 0);
    ++files;
  }
  CHECK(files == 2);

  t2t::write_tf_checkpoint_state(dir / "out", "model.ckpt-1234", {"model.ckpt-1234"});
  CHECK(t2t::find_tf_checkpoint(dir / "out") == (dir / "out/model.ckpt-1234"));
}

TEST_CASE("TF checkpoint writer: refuses what TensorFlow could not read", "[tf_checkpoint]") {
  TempDir dir("tf_writer_errors");
  const std::string prefix = dir / "model.ckpt-1";
  t2t::TFCheckpointWriter w(prefix);
  w.add_floats("a", {2}, {1.f, 2.f});
  CHECK_THAT(error_of([&] { w.add_floats("a", {1}, {3.f}); }), Contains("'a'") && Contains("twice"));
  CHECK_THAT(error_of([&] { w.add_floats("b", {3}, {1.f, 2.f}); }),
             Contains("'b'") && Contains("8 bytes for 3 elements"));
  CHECK_THAT(error_of([&] { w.add("c", t2t::TFDType::kString, {}, "x"); }),
             Contains("'c'") && Contains("string"));
  CHECK_THAT(error_of([&] { w.add_floats("", {1}, {1.f}); }), Contains("needs a name"));
  CHECK_THAT(error_of([] { t2t::make_sstable({{"b", ""}, {"a", ""}}); }),
             Contains("strictly increase"));
  // Abandoned before finish(): nothing stays.
  {
    t2t::TFCheckpointWriter abandoned(dir / "gone/model.ckpt-2");
    abandoned.add_int64s("global_step", {}, {2});
  }
  CHECK(fs::is_empty(dir / "gone"));
}

TEST_CASE("TF checkpoint writer: TensorFlow reads what t2t writes", "[tf_checkpoint][tensorflow]") {
  const char* python = std::getenv("T2T_TF_PYTHON");
  if (!python || !*python)
    T2T_SKIP("T2T_TF_PYTHON (a Python with TensorFlow, e.g. ../shared/t2t-reference-env's) is "
             "not set");
  TempDir dir("tf_writer_tf");
  const std::string prefix = dir / "model.ckpt-7";
  t2t::TFCheckpointWriter w(prefix);
  w.add_floats("body/w", {2, 3}, {1, 2, 3, 4, 5, 6.5f});
  w.add_int64s("global_step", {}, {7});
  w.add("half", t2t::TFDType::kHalf, {2}, std::string("\x00\x3c\x00\xc0", 4));  // 1, -2
  w.finish();
  t2t::write_file_atomic(dir / "read.py",
                         "import sys, tensorflow as tf\n"
                         "r = tf.train.load_checkpoint(sys.argv[1])\n"
                         "print(sorted(r.get_variable_to_shape_map().items()))\n"
                         "print(r.get_tensor('body/w').tolist(), r.get_tensor('global_step'),\n"
                         "      r.get_tensor('half').tolist())\n");
  const auto r = run_command("CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=3 " + std::string(python) +
                             " " + (dir / "read.py") + " " + prefix);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("[('body/w', [2, 3]), ('global_step', []), ('half', [2])]"));
  CHECK_THAT(r.output, Contains("[[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]] 7 [1.0, -2.0]"));
}

TEST_CASE("t2t-avg-all averages a T2T run into a TensorFlow checkpoint", "[t2t_import][e2e]") {
  TempDir dir("tf_avg");
  // Two checkpoints of one T2T run: the fixture's, and a copy at step 30
  // whose float variables are all 3 (written by t2t's writer).
  const std::string run = dir / "run";
  fs::copy(t2t::test::t2t_fixture_dir() + "/train", run);
  const t2t::TFCheckpointReader step20(run + "/model.ckpt-20");
  {
    t2t::TFCheckpointWriter w(run + "/model.ckpt-30");
    for (const std::string& name : step20.names()) {
      const auto& e = step20.entry(name);
      if (name == "global_step") {
        w.add_int64s(name, {}, {30});
      } else if (e.dtype == static_cast<int>(t2t::TFDType::kFloat)) {
        w.add_floats(name, e.shape, std::vector<float>(e.num_elements(), 3.f));
      } else {
        w.add(name, static_cast<t2t::TFDType>(e.dtype), e.shape, step20.read_bytes(name));
      }
    }
    w.finish();
  }
  auto r = run_command("./t2t-avg-all --model_dir=" + run + " --n=2 --output_dir=" + (dir / "avg"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("averaged 2 checkpoint(s)") && Contains("(steps 20 to 30)"));
  const t2t::TFCheckpointReader avg(t2t::find_tf_checkpoint(dir / "avg"));
  CHECK(avg.prefix() == (dir / "avg/model.ckpt-30"));
  CHECK(avg.read_scalar_int("global_step") == 30);
  CHECK(avg.names() == step20.names());
  const std::string var = "transformer/body/decoder/layer_0/ffn/conv1/kernel";
  REQUIRE(avg.has(var));
  const auto before = step20.read_floats(var), after = avg.read_floats(var);
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); i += 37) CHECK(after[i] == Approx((before[i] + 3) / 2));
  CHECK(fs::exists(dir / "avg/hparams.json"));

  // The average decodes with T2T's command line.
  const std::string in = dir / "in.en";
  t2t::write_file_atomic(in, "Hello.\n");
  r = run_command("./t2t-decoder " + t2t::test::t2t_fixture_problem(dir) +
                  " --hparams_set=transformer_tiny --output_dir=" + (dir / "avg") +
                  " --decode_from_file=" + in + " --decode_to_file=" + (dir / "out.zh"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("model.ckpt-30 (step 30)"));

  // Into the run's own directory: refused, the average would take a name there.
  r = run_command("./t2t-avg-all --model_dir=" + run + " --n=2 --output_dir=" + run);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.output, Contains("--output_dir"));
}

TEST_CASE("T2T's own decoder reads t2t-avg-all's TensorFlow checkpoint",
          "[t2t_import][tensorflow][e2e]") {
  const char* python = std::getenv("T2T_TF_PYTHON");
  const fs::path t2t_decoder =
      python && *python ? fs::path(python).parent_path() / "t2t-decoder" : fs::path();
  if (t2t_decoder.empty() || !fs::exists(t2t_decoder))
    T2T_SKIP("T2T_TF_PYTHON does not name the Python of a T2T install (with t2t-decoder beside "
             "it), e.g. ../shared/t2t-reference-env's");
  TempDir dir("tf_avg_t2t");
  const std::string fixture = t2t::test::t2t_fixture_dir();
  // The average of one checkpoint is that checkpoint, rewritten by t2t.
  auto r = run_command("./t2t-avg-all --checkpoints=" + fixture + "/train/model.ckpt-20" +
                       " --output_dir=" + (dir / "avg"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  r = run_command(
      "CUDA_VISIBLE_DEVICES= " + t2t_decoder.string() + " --t2t_usr_dir=" +
      t2t::test::source_dir() + "/tests/t2t_reference/usr --problem=translate_enzh_fixture"
      " --data_dir=" + fixture + "/data --model=transformer --hparams_set=transformer_tiny"
      " --hparams=hidden_size=16,filter_size=32,num_heads=2,batch_size=256,max_length=48,"
      "learning_rate_warmup_steps=10 --output_dir=" + (dir / "avg") +
      " --decode_hparams=beam_size=1 --decode_from_file=" + fixture + "/decodes/in.en"
      " --decode_to_file=" + (dir / "greedy.zh"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(t2t::test::read_lines(dir / "greedy.zh") ==
        t2t::test::read_lines(fixture + "/decodes/greedy.zh"));
}
