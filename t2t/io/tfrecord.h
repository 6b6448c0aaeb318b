// TFRecord files, TensorFlow's container for serialized tf.Examples, so that
// TF and T2T read the data t2t writes and the other way round. Each record is
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
  // Creates or truncates `path` (its directory must exist). Callers who want
  // readers never to see a half-written file write to a temporary name and
  // rename after close().
  explicit TFRecordWriter(const std::string& path);
  // Closes the file if close() was not called; an error then is only logged,
  // since a destructor cannot throw. Call close() to find out.
  ~TFRecordWriter();

  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  void write(std::string_view record);
  // Pushes buffered records to the operating system.
  void flush();
  // Flushes, syncs to disk and closes; throws t2t::Error naming the path when
  // any of it fails (a full disk shows up here at the latest).
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

  // Reads the next record into *record and returns true, or returns false at
  // the clean end of the file. Both CRCs are checked: a corrupt or truncated
  // record throws t2t::Error naming the file and the record's byte offset,
  // and so does every later call.
  bool next(std::string* record);

  // Steps over the next record checking its length CRC and that the file
  // holds all of it, but not reading or checking the payload.
  bool skip();

  const std::string& path() const { return path_; }
  // Byte offset of the next record to read.
  uint64_t offset() const { return offset_; }

 private:
  // Reads and checks the 12-byte header; false at a clean end of file.
  bool read_header(uint64_t* length);
  [[noreturn]] void fail(const std::string& kind, const std::string& what);

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t file_size_ = 0;
  uint64_t offset_ = 0;
  std::string error_;  // set once a record failed
};

// Number of records in a TFRecord file. Fast: payloads are skipped, not read,
// so only framing errors (bad length CRC, truncation) are detected.
uint64_t count_tfrecords(const std::string& path);

}  // namespace t2t
