#include <catch2/catch.hpp>

#include <filesystem>

#include "t2t/io/event_writer.h"
#include "t2t/io/tfrecord.h"
#include "tests/test_util.h"

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

TEST_CASE("event files are TFRecords that protobuf and TensorBoard read", "[events]") {
  TempDir dir("events");
  std::string path;
  {
    t2t::EventWriter writer(dir / "train");
    writer.add_scalars(100, {{"loss", 3.25}, {"learning_rate", 0.001}});
    writer.add_scalar(200, "loss", 2.5);
    writer.flush();
    path = writer.path();
  }
  CHECK(std::filesystem::path(path).filename().string().rfind("events.out.tfevents.", 0) == 0);
  CHECK(t2t::count_tfrecords(path) == 3);

  const std::string python = T2T_TEST_PYTHON;
  const std::string env = "PYTHONPATH='" T2T_TEST_PROTO_DIR "' ";
  if (python.empty() ||
      run_command(env + "'" + python + "' -c 'import google.protobuf, event_pb2'").exit_code != 0) {
    WARN("skipped the protobuf cross-check: no Python with the protobuf package");
    return;
  }
  auto r = run_command(env + "'" + python + "' '" T2T_SOURCE_DIR
                       "/tests/python/tfrecord_crosscheck.py' events '" + path + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("file_version brain.Event:2"));
  CHECK_THAT(r.output, Catch::Contains("step 100 loss 3.2500"));
  CHECK_THAT(r.output, Catch::Contains("step 100 learning_rate 0.0010"));
  CHECK_THAT(r.output, Catch::Contains("step 200 loss 2.5000"));
}
