#include "t2t/io/tfrecord.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/io/crc32c.h"

namespace t2t {

namespace {

constexpr size_t kHeaderBytes = 12;  // length + its CRC
constexpr size_t kFooterBytes = 4;   // payload CRC
// Datagen keeps one writer open per shard (often 100), so buffers stay modest.
constexpr size_t kWriteBuffer = size_t(256) << 10;
constexpr size_t kReadBuffer = size_t(256) << 10;

void put_le32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (8 * i));
}

void put_le64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}

uint32_t get_le32(const char* in) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(in[i]);
  return v;
}

uint64_t get_le64(const char* in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(in[i]);
  return v;
}

const char* const kRegenerate =
    "the file is damaged or was not completely written: delete it and generate it again";

}  // namespace

// ---- writer ----------------------------------------------------------------

TFRecordWriter::TFRecordWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_)
    throw Error("cannot create TFRecord file '" + path + "': " + std::strerror(errno) +
                "; check that its directory exists and is writable");
  std::setvbuf(file_, nullptr, _IOFBF, kWriteBuffer);
}

TFRecordWriter::~TFRecordWriter() {
  if (!file_) return;
  try {
    close();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
}

void TFRecordWriter::fail(const std::string& what) {
  const int err = errno;
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  throw Error("cannot " + what + " TFRecord file '" + path_ + "': " + std::strerror(err) +
              " (disk full?)");
}

void TFRecordWriter::write(std::string_view record) {
  if (!file_) throw Error("TFRecord file '" + path_ + "' was written to after it was closed");
  char header[kHeaderBytes];
  put_le64(header, record.size());
  put_le32(header + 8, mask_crc32c(crc32c(header, 8)));
  char footer[kFooterBytes];
  put_le32(footer, mask_crc32c(crc32c(record)));
  if (std::fwrite(header, 1, kHeaderBytes, file_) != kHeaderBytes ||
      std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fwrite(footer, 1, kFooterBytes, file_) != kFooterBytes)
    fail("write");
  ++records_;
  bytes_ += kHeaderBytes + record.size() + kFooterBytes;
}

void TFRecordWriter::flush() {
  if (file_ && std::fflush(file_) != 0) fail("write");
}

void TFRecordWriter::close() {
  if (!file_) return;
  if (std::fflush(file_) != 0) fail("write");
  // Callers rename the file into place next; without the sync a crash could
  // leave the final name pointing at an incomplete file.
  if (::fsync(::fileno(file_)) != 0) fail("sync");
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    const int err = errno;
    throw Error("cannot close TFRecord file '" + path_ + "': " + std::strerror(err) +
                " (disk full?)");
  }
}

// ---- reader ----------------------------------------------------------------

TFRecordReader::TFRecordReader(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_)
    throw Error("cannot open TFRecord file '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(::fileno(file_), &st) != 0) {
    const int err = errno;
    std::fclose(file_);
    throw Error("cannot stat TFRecord file '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    std::fclose(file_);
    throw Error("'" + path + "' is not a regular file; expected a TFRecord file");
  }
  file_size_ = static_cast<uint64_t>(st.st_size);
  std::setvbuf(file_, nullptr, _IOFBF, kReadBuffer);
}

TFRecordReader::~TFRecordReader() {
  if (file_) std::fclose(file_);
}

void TFRecordReader::fail(const std::string& kind, const std::string& what) {
  error_ = kind + " TFRecord in " + path_ + " at byte offset " + std::to_string(offset_) +
           ": " + what;
  throw Error(error_);
}

bool TFRecordReader::read_header(uint64_t* length) {
  if (!error_.empty()) throw Error(error_);
  char header[kHeaderBytes];
  const size_t got = std::fread(header, 1, kHeaderBytes, file_);
  if (got < kHeaderBytes && std::ferror(file_))
    fail("cannot read", std::strerror(errno));
  if (got == 0) return false;
  if (got < kHeaderBytes)
    fail("truncated", "the file ends " + std::to_string(got) +
                          " bytes into a 12-byte record header; " + kRegenerate);
  if (unmask_crc32c(get_le32(header + 8)) != crc32c(header, 8)) {
    std::string what = "length CRC mismatch; ";
    if (offset_ == 0 && static_cast<unsigned char>(header[0]) == 0x1f &&
        static_cast<unsigned char>(header[1]) == 0x8b)
      what += "the file is gzip-compressed: decompress it first (gunzip)";
    else if (offset_ == 0)
      what += "this is not a TFRecord file, or " + std::string(kRegenerate);
    else
      what += kRegenerate;
    fail("corrupt", what);
  }
  *length = get_le64(header);
  uint64_t left = file_size_ - offset_;
  auto too_short = [&] {
    return left < kHeaderBytes + kFooterBytes || *length > left - kHeaderBytes - kFooterBytes;
  };
  if (too_short()) {
    // The file may have grown since it was opened.
    struct stat st;
    if (::fstat(::fileno(file_), &st) == 0) file_size_ = static_cast<uint64_t>(st.st_size);
    left = file_size_ - offset_;
    if (too_short())
      fail("truncated", "the record needs " + std::to_string(*length + 16) +
                            " bytes but the file has only " + std::to_string(left) +
                            " left; " + kRegenerate);
  }
  return true;
}

bool TFRecordReader::next(std::string* record) {
  uint64_t length = 0;
  if (!read_header(&length)) return false;
  record->resize(length);
  char footer[kFooterBytes];
  if (std::fread(record->data(), 1, length, file_) != length ||
      std::fread(footer, 1, kFooterBytes, file_) != kFooterBytes) {
    if (std::ferror(file_)) fail("cannot read", std::strerror(errno));
    fail("truncated", "the file ended while the record was read (was it shortened?)");
  }
  if (unmask_crc32c(get_le32(footer)) != crc32c(*record)) {
    record->clear();
    fail("corrupt", std::string("payload CRC mismatch; ") + kRegenerate);
  }
  offset_ += kHeaderBytes + length + kFooterBytes;
  return true;
}

bool TFRecordReader::skip() {
  uint64_t length = 0;
  if (!read_header(&length)) return false;
  // read_header checked that the whole record lies within the file.
  if (::fseeko(file_, static_cast<off_t>(length + kFooterBytes), SEEK_CUR) != 0)
    fail("cannot read", std::strerror(errno));
  offset_ += kHeaderBytes + length + kFooterBytes;
  return true;
}

uint64_t count_tfrecords(const std::string& path) {
  TFRecordReader reader(path);
  uint64_t n = 0;
  while (reader.skip()) ++n;
  return n;
}

}  // namespace t2t
