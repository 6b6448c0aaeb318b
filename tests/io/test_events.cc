#include <catch2/catch.hpp>

#include <filesystem>

#include "t2t/io/event_writer.h"
#include "t2t/io/tfrecord.h"
#include "tests/support/test_util.h"

using t2t::test::run_command;
using t2t::test::TempDir;

TEST_CASE("scalar events have TensorFlow's wire format", "[events]") {
  // Event{wall_time: 0.5, step: 3, summary{value{tag: "loss", simple_value: 2.0}}}
  const std::string expected(
      "\x09\x00\x00\x00\x00\x00\x00\xe0\x3f"   // field 1, double 0.5
      "\x10\x03"                               // field 2, varint 3
      "\x2a\x0d"                               // field 5, 13 bytes
      "\x0a\x0b"                               // Summary.value, 11 bytes
      "\x0a\x04loss"                           // tag
      "\x15\x00\x00\x00\x40",                  // simple_value, float 2.0
      26);
  CHECK(t2t::encode_scalar_event(0.5, 3, {{"loss", 2.0}}) == expected);
}

namespace {

// An event file as the trainer writes one: two steps of scalars in the run
// directory `dir`. Returns the file's path.
std::string write_events(const std::string& dir) {
  t2t::EventWriter writer(dir);
  writer.add_scalars(100, {{"loss", 3.25}, {"learning_rate", 0.001}});
  writer.add_scalar(200, "loss", 2.5);
  writer.flush();
  return writer.path();
}

}  // namespace

TEST_CASE("event files are TFRecords named as TensorBoard looks for them", "[events]") {
  TempDir dir("events");
  const std::string path = write_events(dir / "train");
  CHECK(std::filesystem::path(path).parent_path() == std::filesystem::path(dir / "train"));
  CHECK(std::filesystem::path(path).filename().string().rfind("events.out.tfevents.", 0) == 0);
  // The file_version record, then one per step.
  CHECK(t2t::count_tfrecords(path) == 3);
}

TEST_CASE("protobuf's Event class parses our event files", "[events][python]") {
  const std::string python = T2T_TEST_PYTHON;
  const std::string env = "PYTHONPATH='" T2T_TEST_PROTO_DIR "' ";
  if (python.empty() ||
      run_command(env + "'" + python + "' -c 'import google.protobuf, event_pb2'").exit_code != 0)
    T2T_SKIP("no Python with the protobuf package (tools/setup.sh installs one)");
  TempDir dir("events_protobuf");
  const std::string path = write_events(dir / "train");
  auto r = run_command(env + "'" + python + "' '" + t2t::test::source_dir() +
                       "/tests/python/tfrecord_crosscheck.py' events '" + path + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("file_version brain.Event:2"));
  CHECK_THAT(r.output, Catch::Contains("step 100 loss 3.2500"));
  CHECK_THAT(r.output, Catch::Contains("step 100 learning_rate 0.0010"));
  CHECK_THAT(r.output, Catch::Contains("step 200 loss 2.5000"));
}

TEST_CASE("TensorBoard's own reader shows our scalars", "[events][python]") {
  const std::string python = T2T_TEST_PYTHON;
  if (python.empty() ||
      run_command("'" + python + "' -c 'import tensorboard.backend.event_processing'").exit_code != 0)
    T2T_SKIP("no Python with the tensorboard package (tools/setup.sh installs it)");
  TempDir dir("events_tensorboard");
  write_events(dir / "train");
  // The run directory, as `tensorboard --logdir` finds it.
  auto r = run_command("'" + python + "' '" + t2t::test::source_dir() + "/tests/python/tensorboard_read.py' '" +
                       (dir / "train") + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("file_version 2.0\n"));
  // Every point, as a point of TensorBoard's scalar dashboard, in step order.
  CHECK_THAT(r.output, Catch::Contains("step 100 learning_rate 0.0010 scalars\n"
                                       "step 100 loss 3.2500 scalars\n"
                                       "step 200 loss 2.5000 scalars\n"));
}
