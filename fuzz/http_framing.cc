// The framing of an HTTP request as t2t-serve's gate reads it
// (t2t/serve/request_framing.h): the head's end, Content-Length or chunked,
// the chunked body's end. The bytes are read whole and again in pieces of
// sizes the input picks: a reader that reads on as bytes come must reach
// the same end, or the same refusal, either way.
#include <algorithm>
#include <string>

#include "fuzz/fuzz_target.h"
#include "t2t/serve/request_framing.h"

namespace {

constexpr uint64_t kMaxHeader = 4096;
constexpr uint64_t kMaxBody = 1 << 16;

struct Outcome {
  t2t::FramingFault fault = t2t::FramingFault::kNone;
  size_t request_end = 0;  // 0: not whole yet
  uint64_t decoded = 0;  // a whole chunked body's bytes
  bool operator==(const Outcome& o) const {
    return fault == o.fault && request_end == o.request_end && decoded == o.decoded;
  }
};

// As the gate does, with `piece(i)` bytes coming at the i-th read.
template <typename Piece>
Outcome frame(std::string_view data, Piece piece) {
  std::string buf;
  size_t scan_at = 0, head_end = 0;
  bool head_read = false;
  t2t::RequestHead head;
  t2t::ChunkedBody body;
  Outcome out;
  for (size_t at = 0, i = 0; at < data.size(); ++i) {
    const size_t n = std::min(piece(i), data.size() - at);
    buf.append(data.substr(at, n));
    at += n;
    if (!head_read) {
      out.fault = t2t::find_head_end(buf, scan_at, head_end, kMaxHeader);
      if (out.fault != t2t::FramingFault::kNone) return out;
      if (head_end == 0) continue;
      if (head_end > buf.size() || head_end > kMaxHeader) __builtin_trap();
      out.fault = t2t::parse_head(std::string_view(buf.data(), head_end), kMaxBody, head);
      if (out.fault != t2t::FramingFault::kNone) return out;
      for (auto it = head.expect_lines.rbegin(); it != head.expect_lines.rend(); ++it) {
        if (it->first + it->second > head_end) __builtin_trap();
        buf.erase(it->first, it->second);
        head_end -= it->second;
      }
      head_read = true;
      body = t2t::ChunkedBody(head_end);
    }
    if (head.chunked) {
      out.fault = body.read(buf, kMaxBody);
      if (out.fault != t2t::FramingFault::kNone) return out;
      if (body.decoded() > kMaxBody) __builtin_trap();
      if (body.done()) {
        if (body.end() > buf.size()) __builtin_trap();
        out.request_end = body.end();
        out.decoded = body.decoded();
        return out;
      }
    } else {
      const uint64_t length = head.length.value_or(0);
      if (length > kMaxBody) __builtin_trap();
      if (buf.size() >= head_end + length) {
        out.request_end = head_end + length;
        return out;
      }
    }
  }
  return out;
}

}  // namespace

T2T_FUZZ_TARGET(http_framing) {
  const Outcome whole = frame(data, [&](size_t) { return data.size(); });
  // Piece sizes from the input's own bytes, 1 to 16.
  const Outcome pieces = frame(data, [&](size_t i) {
    return data.empty() ? size_t{1} : static_cast<size_t>(data[i % data.size()] & 15) + 1;
  });
  if (!(whole == pieces)) __builtin_trap();
}
