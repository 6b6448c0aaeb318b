#include "t2t/serve/request_framing.h"

#include <algorithm>
#include <cctype>

namespace t2t {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Decimal digits only; `over` once the number passes `max`. False for
// anything but digits.
bool parse_decimal(std::string_view s, uint64_t max, uint64_t& out, bool& over) {
  over = false;
  if (s.empty()) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (!over) {
      out = out * 10 + static_cast<uint64_t>(c - '0');
      over = out > max;
    }
  }
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

int framing_status(FramingFault fault) {
  switch (fault) {
    case FramingFault::kNone: return 200;
    case FramingFault::kHeadTooLong: return 431;
    case FramingFault::kTooLarge: return 413;
    case FramingFault::kBadEncoding: return 501;
    default: return 400;
  }
}

FramingFault find_head_end(const std::string& buf, size_t& scan_at, size_t& head_end,
                           uint64_t max_header_bytes) {
  // httplib ends the head at the first line that is exactly CRLF after the
  // request line.
  while (head_end == 0) {
    const size_t nl = buf.find('\n', scan_at);
    if (nl == std::string::npos) break;
    const bool blank = scan_at > 0 && nl == scan_at + 1 && buf[scan_at] == '\r';
    scan_at = nl + 1;
    if (blank) head_end = nl + 1;
  }
  if (head_end > max_header_bytes || (head_end == 0 && buf.size() > max_header_bytes))
    return FramingFault::kHeadTooLong;
  return FramingFault::kNone;
}

FramingFault parse_head(std::string_view head, uint64_t max_body_bytes, RequestHead& out) {
  out = RequestHead();
  bool seen_encoding = false;
  size_t at = head.find('\n') + 1;
  while (at + 2 < head.size()) {
    const size_t nl = head.find('\n', at);
    if (nl == std::string_view::npos) break;  // not a head find_head_end found
    const std::string_view line = head.substr(at, nl + 1 - at);
    const size_t line_at = at;
    at = nl + 1;
    if (line.size() < 2 || line[line.size() - 2] != '\r') continue;  // httplib skips it
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim(line.substr(colon + 1, line.size() - 2 - colon - 1));
    if (iequals(name, "Content-Length")) {
      if (out.length) return FramingFault::kTwoLengths;
      uint64_t n = 0;
      bool over = false;
      if (!parse_decimal(value, max_body_bytes, n, over)) return FramingFault::kLengthNotDecimal;
      if (over) return FramingFault::kTooLarge;
      out.length = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      if (seen_encoding || !iequals(value, "chunked")) return FramingFault::kBadEncoding;
      seen_encoding = out.chunked = true;
    } else if (iequals(name, "Expect")) {
      out.expect_lines.emplace_back(line_at, line.size());
    }
  }
  if (out.length && out.chunked) return FramingFault::kLengthAndChunked;
  return FramingFault::kNone;
}

FramingFault ChunkedBody::read(const std::string& b, uint64_t max_body_bytes) {
  if (done_) return FramingFault::kNone;
  // Tiny chunks cost more in framing than they carry: bounded too.
  if (b.size() - start_ > 2 * max_body_bytes + 65536) return FramingFault::kTooLarge;
  for (;;) {
    switch (part_) {
      case Part::kSize: {
        const size_t crlf = b.find("\r\n", at_);
        if (crlf == std::string::npos)
          return b.size() - at_ > kMaxChunkLine ? FramingFault::kLongChunkLine
                                                : FramingFault::kNone;
        uint64_t size = 0;
        size_t i = at_;
        for (; i < crlf && hex_digit(b[i]) >= 0; ++i) {
          size = size * 16 + static_cast<uint64_t>(hex_digit(b[i]));
          if (size > max_body_bytes) return FramingFault::kTooLarge;
        }
        if (i == at_ || (i < crlf && b[i] != ';')) return FramingFault::kBadChunkSize;
        at_ = crlf + 2;
        if (size == 0) {
          part_ = Part::kLast;
          break;
        }
        decoded_ += size;
        if (decoded_ > max_body_bytes) return FramingFault::kTooLarge;
        left_ = size;
        part_ = Part::kData;
        break;
      }
      case Part::kData: {
        const size_t take = std::min<uint64_t>(left_, b.size() - at_);
        at_ += take;
        left_ -= take;
        if (left_ > 0) return FramingFault::kNone;
        part_ = Part::kDataEnd;
        break;
      }
      case Part::kDataEnd:
      case Part::kLast:
        if (b.size() - at_ < 2) return FramingFault::kNone;
        if (b.compare(at_, 2, "\r\n") != 0)
          return part_ == Part::kLast ? FramingFault::kTrailers : FramingFault::kBadChunkEnd;
        at_ += 2;
        if (part_ == Part::kLast) {
          done_ = true;
          return FramingFault::kNone;
        }
        part_ = Part::kSize;
        break;
    }
  }
}

}  // namespace t2t
