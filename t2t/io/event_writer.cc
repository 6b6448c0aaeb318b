#include "t2t/io/event_writer.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/io/tfrecord.h"

namespace t2t {

namespace {

// Protocol-buffer wire format, by hand for the few messages written here
// (t2t links no protobuf run-time; see t2t/io/example.cc).
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_tag(std::string& out, uint32_t field, uint32_t wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

template <typename T>
void put_fixed(std::string& out, uint32_t field, T value) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "fixed32 or fixed64");
  put_tag(out, field, sizeof(T) == 8 ? 1 : 5);
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));  // little-endian on every supported host
  out.append(raw, sizeof(T));
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Event fields: wall_time 1 (double), step 2 (int64), file_version 3,
// summary 5. Summary.value 1; Summary.Value: tag 1, simple_value 2 (float).
std::string event_header(double wall_time, int64_t step) {
  std::string e;
  put_fixed(e, 1, wall_time);
  if (step != 0) {
    put_tag(e, 2, 0);
    put_varint(e, static_cast<uint64_t>(step));
  }
  return e;
}

}  // namespace

std::string encode_scalar_event(double wall_time, int64_t step,
                                const std::vector<std::pair<std::string, double>>& scalars) {
  std::string summary;
  for (const auto& [tag, value] : scalars) {
    std::string v;
    put_bytes(v, 1, tag);
    put_fixed(v, 2, static_cast<float>(value));
    put_bytes(summary, 1, v);
  }
  std::string e = event_header(wall_time, step);
  put_bytes(e, 5, summary);
  return e;
}

EventWriter::EventWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create the event directory '" + dir + "': " + ec.message());
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const double t = now_seconds();
  path_ = (std::filesystem::path(dir) /
           ("events.out.tfevents." + std::to_string(static_cast<int64_t>(t)) + "." + host))
              .string();
  writer_ = std::make_unique<TFRecordWriter>(path_);
  std::string first = event_header(t, 0);
  put_bytes(first, 3, "brain.Event:2");
  writer_->write(first);
  writer_->flush();
}

EventWriter::~EventWriter() = default;

void EventWriter::add_scalars(int64_t step,
                              const std::vector<std::pair<std::string, double>>& scalars) {
  writer_->write(encode_scalar_event(now_seconds(), step, scalars));
}

void EventWriter::flush() { writer_->flush(); }

}  // namespace t2t
