// Where an HTTP/1.1 request ends, read strictly from the bytes that have
// come so far: the end of its head (request line and headers), what the
// headers say of the body (Content-Length or chunked), and the end of a
// chunked body. No sockets and no httplib: the gate (connection_gate.h)
// calls it as bytes arrive, and a fuzz harness drives it directly.
//
// Strict where httplib and the gate could disagree about a body's end: two
// Content-Lengths, one that is not plain digits, Content-Length with
// chunked, any other Transfer-Encoding, chunk extensions without a size,
// trailers. Every count is bounded by the limits before it is added up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t2t {

// Why a request is refused; the gate answers each with its status.
enum class FramingFault {
  kNone,
  kHeadTooLong,        // 431: the head is not within max_header_bytes
  kTwoLengths,         // 400
  kLengthNotDecimal,   // 400
  kTooLarge,           // 413: the body is beyond max_body_bytes
  kBadEncoding,        // 501: a Transfer-Encoding other than one "chunked"
  kLengthAndChunked,   // 400
  kLongChunkLine,      // 400: a chunk-size line beyond kMaxChunkLine
  kBadChunkSize,       // 400
  kTrailers,           // 400
  kBadChunkEnd,        // 400: a chunk's data not followed by CRLF
};

// The HTTP status the gate answers `fault` with.
int framing_status(FramingFault fault);

struct FramingLimits {
  uint64_t max_header_bytes = 0;
  uint64_t max_body_bytes = 0;
};

// Longest chunk-size line (hex digits and extensions).
constexpr size_t kMaxChunkLine = 1024;

// Looks for the blank line that ends the head in `buf`, from `scan_at` on
// (advanced past every whole line, so a later call goes on from there).
// Sets `head_end` (just past the blank line) once found. kHeadTooLong when
// the head is, or can only be, longer than max_header_bytes.
FramingFault find_head_end(const std::string& buf, size_t& scan_at, size_t& head_end,
                           uint64_t max_header_bytes);

// What the head says of the body.
struct RequestHead {
  std::optional<uint64_t> length;  // Content-Length
  bool chunked = false;
  // Each Expect header line as (offset, size) in the head: the gate answers
  // 100-continue itself and drops them before httplib reads the head.
  std::vector<std::pair<size_t, size_t>> expect_lines;

  bool has_body() const { return chunked || (length && *length > 0); }
};

// Reads the headers of `head` (the request up to head_end), as httplib
// will: lines end at LF; lines without CR before it or without a colon are
// skipped.
FramingFault parse_head(std::string_view head, uint64_t max_body_bytes, RequestHead& out);

// A chunked body, read on as bytes come.
class ChunkedBody {
 public:
  // The body starts at `start` in the connection's buffer.
  explicit ChunkedBody(size_t start = 0) : start_(start), at_(start) {}

  // Reads on in `buf` (the same buffer, grown since the last call).
  // kNone with done() once the body is whole, end() just past it.
  FramingFault read(const std::string& buf, uint64_t max_body_bytes);

  bool done() const { return done_; }
  size_t end() const { return at_; }
  // The body's bytes, without the framing.
  uint64_t decoded() const { return decoded_; }

 private:
  enum class Part { kSize, kData, kDataEnd, kLast };
  size_t start_;
  size_t at_;
  Part part_ = Part::kSize;
  uint64_t left_ = 0;
  uint64_t decoded_ = 0;
  bool done_ = false;
};

}  // namespace t2t
