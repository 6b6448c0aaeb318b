// t2t-serve's HTTP server: cpp-httplib's routing behind a gate that reads
// each request whole before a worker thread sees it.
//
// httplib (0.11) gives a connection one thread of its pool for the
// connection's whole life, idle keep-alive waits included, and queues the
// connections beyond its pool without bound. Its read timeout is per read,
// so a client that sends a byte every few seconds holds its thread for
// ever: a few hundred slow clients starve everyone else. It also reads a
// request line or a header line of any length, any number of headers, and
// chunked bodies past set_payload_max_length.
//
// Here one poll() thread holds every connection while its request arrives:
// the request line and headers within header_timeout_s and
// max_header_bytes, then the body (by Content-Length, or chunked, its
// framing checked as it comes) within body_timeout_s and max_body_bytes.
// Only a whole request goes to one of `threads` workers, which runs
// httplib's routing on the buffered bytes (it never waits on the client),
// writes the answer within write_timeout_s, and hands the connection back
// to wait for the next request (keep_alive_timeout_s). The gate also answers
// on its own, with a JSON error and Connection: close, what it refuses:
// 408 (too slow), 413 (body too large), 431 (headers too large), 400 and
// 501 (framing it cannot trust), 503 (more whole requests waiting than
// max_waiting_requests, or bodies beyond max_buffered_bytes in memory).
// Beyond max_connections the connection that has been sending its request
// the longest is dropped for the newcomer (a slow or idle one, never one
// whose request is complete); only when every connection holds a whole
// request is the newcomer refused.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "t2t/core/error.h"
#include "t2t/serve/gate_limits.h"

namespace t2t {


// Called for each connection the gate drops or answers itself: why
// ("header_timeout", "max_connections", ...) and the status it answered
// (0: closed without one). From the gate's threads: must be thread-safe.
using GateRefusal = std::function<void(const std::string& reason, int status)>;

class GatedHttpServer : public httplib::Server {
 public:
  // `spell` writes the limits' option names in the gate's answers
  // ("header_timeout" -> "--header_timeout"); null: as named in GateLimits.
  GatedHttpServer(const GateLimits& limits, OptionSpelling spell, GateRefusal on_refusal);
  ~GatedHttpServer() override;

 private:
  class Gate;
  // httplib calls this for each accepted socket: the gate takes it.
  bool process_and_close_socket(socket_t sock) override;
  // httplib's handling of the one request `stream` holds.
  bool handle(httplib::Stream& stream, bool close_connection, bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed, nullptr);
  }

  std::unique_ptr<Gate> gate_;
};

}  // namespace t2t
