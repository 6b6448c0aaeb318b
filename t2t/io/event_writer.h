// TensorBoard event files: `events.out.tfevents.<seconds>.<host>`, a TFRecord
// of Event protos (file_version "brain.Event:2", then scalar summaries).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

class TFRecordWriter;

class EventWriter {
 public:
  // Creates `dir` if needed and a new event file in it.
  explicit EventWriter(const std::string& dir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // One event holding every (tag, value) pair, at `step`.
  void add_scalars(int64_t step, const std::vector<std::pair<std::string, double>>& scalars);
  void add_scalar(int64_t step, const std::string& tag, double value) {
    add_scalars(step, {{tag, value}});
  }
  // Pushes written events to the operating system, so TensorBoard sees them.
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<TFRecordWriter> writer_;
};

// The serialized Event for `scalars` (exposed for tests).
std::string encode_scalar_event(double wall_time, int64_t step,
                                const std::vector<std::pair<std::string, double>>& scalars);

}  // namespace t2t
