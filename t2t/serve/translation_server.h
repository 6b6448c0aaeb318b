// t2t-serve's server: HTTP/JSON endpoints (cpp-httplib) in front of a
// Translator (t2t/translate/translator.h), whose shared queue batches the
// sentences of concurrent requests and which reloads newer checkpoints, and
// the lifecycle: listen, load, serve, and on SIGTERM/SIGINT stop accepting,
// finish what is queued (bounded by shutdown_timeout) and return 0. HTTP
// and JSON only: what is translated, and how, is the Translator's. Each
// request is read whole, within the timeouts and limits below, before a
// thread handles it (connection_gate.h).
//
//   POST /v1/translate  translate_api.h
//   POST /v1/reload     load the newest checkpoint beside the serving one
//   GET  /health        200 while the process runs
//   GET  /ready         200 once a model is loaded, 503 before and while stopping
//   GET  /metrics       serve_metrics.h
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "t2t/core/error.h"
#include "t2t/serve/gate_limits.h"
#include "t2t/serve/translate_api.h"

namespace t2t {

class Translator;

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (logged)
  TranslateLimits limits;
  int64_t max_input_tokens = 256;  // per sentence, EOS included; over: 413
  int64_t max_request_bytes = 1 << 20;  // over: 413
  int http_threads = 128;  // requests handled at once
  // What connections may hold (connection_gate.h): max_connections (beyond:
  // the slowest sender is dropped, or 503), max_waiting_requests (503),
  // max_header_bytes (431), max_buffered_bytes (503), the timeouts (408).
  // Its threads and max_body_bytes are http_threads and max_request_bytes.
  GateLimits gate;
  std::string api_key_file;  // empty: no keys asked
  bool log_requests = false;  // log texts and translations
  double shutdown_timeout_s = 30;
  double watch_checkpoints_s = 0;  // 0: reload on POST /v1/reload only
  // How the server's answers and log lines write its options ("--max_queue"
  // for t2t-serve's flags); null: as named here (max_queue, shutdown_timeout).
  OptionSpelling spell;
};

// Runs until SIGTERM or SIGINT and returns the exit status (0 once drained).
// Throws t2t::Error when it cannot start (address in use, model failing to
// load, unreadable key file), an OptionError when an option is at fault
// (max_connections beyond the open files the process may have).
// The translator is loaded here, after the server listens (Translator::
// Load::kLater), so that /health answers while it loads.
int serve(const ServerConfig& config, Translator& translator);

}  // namespace t2t
