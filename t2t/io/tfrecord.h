// TFRecord files, TensorFlow's container for serialized tf.Examples. A record:
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   payload | uint32 masked CRC-32C of the payload.
// Only uncompressed files (T2T's default) are handled.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace t2t {

class TFRecordWriter {
 public:
  // Creates or truncates `path` (its directory must exist).
  explicit TFRecordWriter(const std::string& path);
  // Closes the file if close() was not called; an error then is only logged.
  ~TFRecordWriter();

  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  void write(std::string_view record);
  // Pushes buffered records to the operating system.
  void flush();
  // Flushes, syncs and closes; throws t2t::Error naming the path on failure.
  void close();

  const std::string& path() const { return path_; }
  uint64_t records_written() const { return records_; }
  uint64_t bytes_written() const { return bytes_; }

 private:
  [[noreturn]] void fail(const std::string& what);

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t records_ = 0;
  uint64_t bytes_ = 0;
};

class TFRecordReader {
 public:
  // Throws t2t::Error naming the path when it cannot be opened.
  explicit TFRecordReader(const std::string& path);
  ~TFRecordReader();

  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;

  // Reads the next record; false at the clean end of the file. A corrupt or
  // truncated record throws t2t::Error naming the file and byte offset, and
  // so does every later call.
  bool next(std::string* record);

  // Steps over the next record, checking its framing but not its payload.
  bool skip();

  const std::string& path() const { return path_; }
  // Byte offset of the next record to read.
  uint64_t offset() const { return offset_; }

 private:
  bool read_header(uint64_t* length);
  [[noreturn]] void fail(const std::string& kind, const std::string& what);

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t file_size_ = 0;
  uint64_t offset_ = 0;
  std::string error_;  // set once a record failed
};

// Number of records in a TFRecord file; payloads are skipped, unchecked.
uint64_t count_tfrecords(const std::string& path);

}  // namespace t2t
