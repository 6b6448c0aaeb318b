// What t2t-serve's connection gate (connection_gate.h) allows: the limits
// on connections, request sizes and timeouts, in a header without httplib
// so that the server's configuration can hold them.
#pragma once

#include <cstdint>

namespace t2t {

struct GateLimits {
  int threads = 128;  // requests handled at once
  int max_connections = 512;
  int max_waiting_requests = 256;  // whole requests waiting for a thread
  int64_t max_header_bytes = 65536;  // request line and headers
  int64_t max_body_bytes = 1 << 20;  // decoded, chunked or not
  int64_t max_buffered_bytes = int64_t{128} << 20;  // bodies held at once
  double header_timeout_s = 10;  // from the request's first byte (or the connect)
  double body_timeout_s = 30;  // from the end of the headers
  double keep_alive_timeout_s = 5;  // idle between requests; 0: one request a connection
  double write_timeout_s = 10;  // for one answer
};

}  // namespace t2t
