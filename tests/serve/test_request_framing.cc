// The gate's reading of HTTP framing (t2t/serve/request_framing.h), without
// sockets: each refusal, Expect lines, and chunked bodies read on as bytes
// come. tests/serve/test_hostile_clients.cc sends the same over 127.0.0.1.
#include <catch2/catch.hpp>

#include <string>

#include "t2t/serve/request_framing.h"

using t2t::FramingFault;

namespace {

constexpr uint64_t kMaxHeader = 256;
constexpr uint64_t kMaxBody = 100;

// The head's fault, or the body's when the head is fine.
FramingFault head_fault(const std::string& request, t2t::RequestHead* out = nullptr) {
  size_t scan_at = 0, head_end = 0;
  FramingFault fault = t2t::find_head_end(request, scan_at, head_end, kMaxHeader);
  if (fault != FramingFault::kNone) return fault;
  REQUIRE(head_end > 0);
  t2t::RequestHead head;
  fault = t2t::parse_head(std::string_view(request.data(), head_end), kMaxBody, head);
  if (out) *out = head;
  return fault;
}

}  // namespace

TEST_CASE("the head ends at its blank line, within max_header_bytes", "[serve][framing]") {
  const std::string request = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /next";
  size_t scan_at = 0, head_end = 0;
  // Byte by byte: found once the blank line is whole, never before.
  std::string buf;
  for (char c : request) {
    buf += c;
    REQUIRE(t2t::find_head_end(buf, scan_at, head_end, kMaxHeader) == FramingFault::kNone);
    if (head_end) break;
  }
  CHECK(head_end == request.find("GET /next"));
  size_t s = 0, e = 0;
  CHECK(t2t::find_head_end(std::string(kMaxHeader + 1, 'a'), s, e, kMaxHeader) ==
        FramingFault::kHeadTooLong);
  s = e = 0;
  const std::string long_head = "GET / HTTP/1.1\r\nX: " + std::string(kMaxHeader, 'b') + "\r\n\r\n";
  CHECK(t2t::find_head_end(long_head, s, e, kMaxHeader) == FramingFault::kHeadTooLong);
}

TEST_CASE("framing httplib could read otherwise is refused", "[serve][framing]") {
  t2t::RequestHead head;
  CHECK(head_fault("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n", &head) == FramingFault::kNone);
  CHECK(head.length == 12u);
  CHECK(head.has_body());
  CHECK(head_fault("POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 1\r\n\r\n") ==
        FramingFault::kTwoLengths);
  CHECK(head_fault("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n") ==
        FramingFault::kLengthNotDecimal);
  CHECK(head_fault("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n") ==
        FramingFault::kTooLarge);
  CHECK(head_fault("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") ==
        FramingFault::kBadEncoding);
  CHECK(head_fault("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n") == FramingFault::kBadEncoding);
  CHECK(head_fault("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n") ==
        FramingFault::kLengthAndChunked);
  // A line without CR before its LF is one httplib skips: so does the gate.
  CHECK(head_fault("POST / HTTP/1.1\r\nContent-Length: 5\n\r\n", &head) == FramingFault::kNone);
  CHECK(!head.length);
  CHECK(framing_status(FramingFault::kHeadTooLong) == 431);
  CHECK(framing_status(FramingFault::kTooLarge) == 413);
  CHECK(framing_status(FramingFault::kBadEncoding) == 501);
  CHECK(framing_status(FramingFault::kTrailers) == 400);
}

TEST_CASE("Expect lines are found for the gate to answer", "[serve][framing]") {
  const std::string request =
      "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}";
  t2t::RequestHead head;
  REQUIRE(head_fault(request, &head) == FramingFault::kNone);
  REQUIRE(head.expect_lines.size() == 1);
  CHECK(request.substr(head.expect_lines[0].first, head.expect_lines[0].second) ==
        "Expect: 100-continue\r\n");
}

TEST_CASE("a chunked body is read on as its bytes come", "[serve][framing]") {
  const std::string body = "4;x=y\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\nNEXT";
  for (size_t step : {size_t{1}, size_t{2}, size_t{5}, body.size()}) {
    INFO("pieces of " << step);
    t2t::ChunkedBody chunks;
    std::string buf;
    for (size_t at = 0; at < body.size() && !chunks.done(); at += step) {
      buf += body.substr(at, step);
      REQUIRE(chunks.read(buf, kMaxBody) == FramingFault::kNone);
    }
    REQUIRE(chunks.done());
    CHECK(chunks.end() == body.find("NEXT"));
    CHECK(chunks.decoded() == 7);
  }
  auto fault = [](const std::string& b) { return t2t::ChunkedBody().read(b, kMaxBody); };
  CHECK(fault("zz\r\n") == FramingFault::kBadChunkSize);
  CHECK(fault(";x\r\n") == FramingFault::kBadChunkSize);
  CHECK(fault("65\r\n") == FramingFault::kTooLarge);  // 101 > 100
  CHECK(fault("40\r\n" + std::string(64, 'a') + "\r\n40\r\n") == FramingFault::kTooLarge);
  CHECK(fault("1\r\nab\r\n") == FramingFault::kBadChunkEnd);
  CHECK(fault("0\r\nTrailer: x\r\n\r\n") == FramingFault::kTrailers);
  CHECK(fault(std::string(t2t::kMaxChunkLine + 1, '1')) == FramingFault::kLongChunkLine);
  CHECK(fault("1\r\na") == FramingFault::kNone);  // more to come
}
