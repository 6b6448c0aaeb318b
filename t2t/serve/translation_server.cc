#include "t2t/serve/translation_server.h"

#include <ATen/Parallel.h>
#include <httplib.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/serve/api_keys.h"
#include "t2t/serve/connection_gate.h"
#include "t2t/serve/serve_metrics.h"
#include "t2t/serve/stop_signals.h"
#include "t2t/serve/web_page.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/translator.h"

namespace t2t {

namespace {

const char* const kEndpoints =
    "POST /v1/translate, POST /v1/reload, GET /health, GET /ready, GET /metrics, and GET / (a "
    "page to try the model in a browser)";

// The path as a metrics label: the known ones, else "other", so that
// clients probing random paths cannot grow the label set.
std::string path_label(const std::string& path) {
  for (const char* known : {"/v1/translate", "/v1/reload", "/health", "/ready", "/metrics", "/"})
    if (path == known) return path;
  return "other";
}

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" ||
         host.rfind("127.", 0) == 0;
}

GateLimits gate_limits(const ServerConfig& config) {
  GateLimits limits = config.gate;
  limits.threads = config.http_threads;
  limits.max_body_bytes = config.max_request_bytes;
  return limits;
}

// Each connection is a file descriptor: raises the soft limit on open files
// to cover max_connections (and the server's own files), within the hard
// limit, so that a flood of connections meets the gate's limit, not EMFILE.
void make_room_for_connections(int64_t max_connections) {
  constexpr int64_t kOwnFiles = 256;  // checkpoints, logs, the listening socket, libraries
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  const rlim_t needed = static_cast<rlim_t>(max_connections + kOwnFiles);
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < needed) {
    files.rlim_cur = files.rlim_max == RLIM_INFINITY ? needed : std::min(needed, files.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::getrlimit(RLIMIT_NOFILE, &files);
  }
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < needed)
    throw OptionError("max_connections",
                      "{max_connections}=" + std::to_string(max_connections) + " needs " +
                          std::to_string(needed) + " open files, and this process may open " +
                          std::to_string(files.rlim_cur) + " (ulimit -n): lower {max_connections} "
                          "or raise the limit");
}

class Server {
 public:
  Server(const ServerConfig& config, Translator& translator)
      : config_(config),
        translator_(translator),
        http_(gate_limits(config), [this](const std::string& name) { return option(name); },
              [this](const std::string& reason, int) { metrics_.connection_refused(reason); }) {
    if (!config_.api_key_file.empty()) keys_ = ApiKeys::from_file(config_.api_key_file);
    // Counted before the answers go out: a client that reads /metrics right
    // after its answer sees its sentences.
    translator_.on_batch(
        [this](int64_t sentences, int64_t tokens) { metrics_.batch_done(sentences, tokens); });
    setup_http();
  }

  int run();

 private:
  void setup_http();
  void translate(const httplib::Request& req, httplib::Response& res);
  void reload(const std::string& body, httplib::Response& res);
  void ready(httplib::Response& res);
  void answer(httplib::Response& res, int status, const std::string& json);
  void answer_error(httplib::Response& res, int status, const std::string& message);
  // An option as the front end spells it (config_.spell).
  std::string option(const std::string& name) const {
    return config_.spell ? config_.spell(name) : name;
  }

  void watch_loop();
  void request_stop(const std::string& why);
  int drain_and_stop(std::thread& listener);
  void stop_http(std::thread& listener);

  const ServerConfig config_;
  Translator& translator_;
  ApiKeys keys_;
  ServeMetrics metrics_;
  GatedHttpServer http_;
  std::unique_ptr<StopSignals> signals_;
  std::thread watch_thread_;
  int listen_socket_ = -1;

  std::atomic<bool> stopping_{false};
  std::atomic<bool> listener_done_{false};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> request_ids_{0};
  std::mutex stop_mutex_;
  std::condition_variable stop_changed_;
  bool stop_requested_ = false;
  bool finished_ = false;  // tells the watcher thread to end
  std::string stop_reason_;
};

void Server::answer(httplib::Response& res, int status, const std::string& json) {
  res.status = status;
  res.set_content(json, "application/json");
}

void Server::answer_error(httplib::Response& res, int status, const std::string& message) {
  // 503 always means "try again": the queue is full, the model is loading,
  // or the server is stopping (then another replica should answer).
  if (status == 503) res.set_header("Retry-After", "1");
  answer(res, status, error_body(message));
}

void Server::setup_http() {
  // Timeouts and the limits on connections are the gate's (connection_gate.h).
  http_.set_payload_max_length(static_cast<size_t>(config_.max_request_bytes));
  http_.set_tcp_nodelay(true);  // answers are small: do not hold them back
  // httplib's default also sets SO_REUSEPORT, which lets a second server
  // bind the same port and silently share its traffic: keep SO_REUSEADDR
  // only (a restart may reuse a port in TIME_WAIT). Remember the socket to
  // widen its backlog after binding.
  http_.set_socket_options([this](int sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_socket_ = sock;
  });
  http_.set_keep_alive_max_count(100000);
  // What the Keep-Alive header of the answers announces.
  http_.set_keep_alive_timeout(static_cast<time_t>(config_.gate.keep_alive_timeout_s));

  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Probes stay open so that an orchestrator needs no key.
    if (!keys_.enabled() || req.path == "/health" || req.path == "/ready")
      return httplib::Server::HandlerResponse::Unhandled;
    if (keys_.allows(req.get_header_value("Authorization")))
      return httplib::Server::HandlerResponse::Unhandled;
    // A browser cannot send the header when it opens the page: there the
    // key may come as ?key=, and the page sends it on as the header.
    if (req.path == "/") {
      if (req.has_param("key") && keys_.allows("Bearer " + req.get_param_value("key")))
        return httplib::Server::HandlerResponse::Unhandled;
      res.status = 401;
      res.set_content(web_page_key_needed(), "text/html; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    res.set_header("WWW-Authenticate", "Bearer");
    answer_error(res, 401, "missing or wrong API key: send the header 'Authorization: Bearer KEY' "
                           "with a key of the server's " + option("api_key_file"));
    return httplib::Server::HandlerResponse::Handled;
  });
  http_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // our own errors carry their message
    std::string message;
    switch (res.status) {
      case 404: message = "no endpoint " + req.method + " " + req.path + "; the endpoints are " +
                          kEndpoints; break;
      case 413: message = "the request body is larger than this server takes (" +
                          option("max_request_bytes") + "): split the request"; break;
      case 400: message = "the HTTP request could not be read: its request line or a header "
                          "is malformed, or a header is longer than 8192 bytes"; break;
      case 414: message = "the request line is longer than 8192 bytes"; break;
      default: message = "HTTP status " + std::to_string(res.status);
    }
    res.set_content(error_body(message), "application/json");
  });
  http_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    metrics_.request_done(path_label(req.path), res.status);
  });
  http_.set_exception_handler(
      [this](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          if (error) std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("internal error: {}", what);
        answer_error(res, 500, "internal error: " + what);
      });
  // Method and path, never bodies: texts appear in the log only with
  // --log_requests.
  http_.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("{} {} {} ({} bytes in, {} out)", req.method, req.path, res.status,
                  req.body.size(), res.body.size());
  });

  http_.Post("/v1/translate", [this](const httplib::Request& req, httplib::Response& res) {
    translate(req, res);
  });
  // With a content reader httplib leaves the body to the handler, so that
  // a bare "curl -X POST" (no Content-Length) is not refused as malformed.
  http_.Post("/v1/reload", [this](const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& read_content) {
    std::string body;
    if (req.has_header("Content-Length") || req.get_header_value("Transfer-Encoding") == "chunked")
      read_content([&](const char* data, size_t size) {
        body.append(data, size);
        return body.size() <= 4096;
      });
    reload(body, res);
  });
  http_.Get("/", [](const httplib::Request&, httplib::Response& res) {
    // Everything is inline: the page may load nothing from elsewhere.
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                   "connect-src 'self'; img-src 'self'");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-store");
    res.set_content(web_page(), "text/html; charset=utf-8");
  });
  http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    answer(res, 200, nlohmann::json{{"status", "alive"}}.dump());
  });
  http_.Get("/ready", [this](const httplib::Request&, httplib::Response& res) { ready(res); });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const auto model = translator_.current();
    res.set_content(metrics_.prometheus_text(translator_.queue_depth(), in_flight_,
                                             model ? model->step : -1),
                    "text/plain; version=0.0.4");
  });
  for (const char* path : {"/v1/translate", "/v1/reload"})
    http_.Get(path, [path](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content(error_body(std::string(path) + " takes POST"), "application/json");
    });
}

void Server::ready(httplib::Response& res) {
  const auto model = translator_.current();
  if (stopping_) return answer_error(res, 503, "stopping");
  if (!model) return answer_error(res, 503, "loading the model");
  answer(res, 200, nlohmann::json{{"status", "ready"},
                                  {"checkpoint", model->checkpoint},
                                  {"model_step", model->step}}
                       .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Server::translate(const httplib::Request& req, httplib::Response& res) {
  const Stopwatch clock;
  ++in_flight_;
  struct Leave {
    std::atomic<int64_t>& count;
    ~Leave() { --count; }
  } leave{in_flight_};
  const int64_t id = ++request_ids_;
  try {
    if (stopping_) throw ApiError(503, "the server is stopping and takes no new requests");
    const auto model = translator_.current();
    if (!model) throw ApiError(503, "the model is still loading; GET /ready answers 200 once it is");
    const TranslateRequest request =
        parse_translate_request(req.body, config_.limits, config_.spell);
    const SearchOptions search =
        request_search(request, model->batch_translator->options().search);
    std::vector<std::vector<int64_t>> sources;
    sources.reserve(request.texts.size());
    for (size_t i = 0; i < request.texts.size(); ++i) {
      std::vector<int64_t> ids = model->batch_translator->encode_text(request.texts[i]);
      if (static_cast<int64_t>(ids.size()) > config_.max_input_tokens)
        throw ApiError(413, "\"text\"[" + std::to_string(i) + "] is " + std::to_string(ids.size()) +
                                " tokens long (EOS included), more than this server takes "
                                "(" + option("max_input_tokens") + "=" +
                                std::to_string(config_.max_input_tokens) +
                                "): split it");
      if (!ids.empty())
        ids = model->batch_translator->fit_source(std::move(ids),
                                         "request " + std::to_string(id) + " text " +
                                             std::to_string(i));
      sources.push_back(std::move(ids));
    }
    GuidedSources guided;
    try {
      guided = translator_.guide(*model, request.texts, sources, request.guides, request.glossary,
                                 search);
    } catch (const OptionError& e) {
      throw request_error(e);
    } catch (const Error& e) {
      throw ApiError(400, e.what());
    }
    auto pending = std::make_shared<PendingRequest>(std::move(sources), search, model,
                                                    std::move(guided.guides));
    switch (translator_.submit(pending)) {
      case BatchQueue::Admission::kQueued: break;
      case BatchQueue::Admission::kFull:
        throw ApiError(503, "the queue is full (" + std::to_string(translator_.queue_depth()) +
                                " sentences waiting, " + option("max_queue") + "=" +
                                std::to_string(translator_.options().batching.max_queue) + "): retry later");
      case BatchQueue::Admission::kClosed:
        throw ApiError(503, "the server is stopping and takes no new requests");
    }
    if (!pending->wait())
      throw ApiError(stopping_ ? 503 : 500, pending->error());
    const int64_t n_best = search.num_return;
    auto translations = pending->translations();
    guided.annotate(translations);
    answer(res, 200, translate_response(translations, n_best, model->step));
    metrics_.translate_latency(clock.seconds());
    if (config_.log_requests) {
      for (size_t i = 0; i < request.texts.size(); ++i) {
        const auto& texts = pending->translations()[i].texts;
        spdlog::info("request {} text {}: {} => {}", id, i, request.texts[i],
                     texts.empty() ? "" : texts[0]);
      }
    }
  } catch (const ApiError& e) {
    answer_error(res, e.status, e.what());
    if (config_.log_requests)
      spdlog::info("request {}: {} {}", id, e.status, e.what());
  }
}

void Server::reload(const std::string& body, httplib::Response& res) {
  // The body may be empty or {}: the checkpoint is always the newest beside
  // the serving one, never a path a client names.
  if (!body.empty()) {
    const auto doc = nlohmann::json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.empty())
      return answer_error(res, 400, "POST /v1/reload takes no options: send an empty body or {}");
  }
  if (!translator_.current()) return answer_error(res, 503, "the model is still loading");
  try {
    const ReloadResult r = translator_.reload();
    metrics_.reload_done(true);
    if (r.reloaded)
      spdlog::info("reloaded: now serving {} (step {}, was step {})", r.checkpoint, r.step,
                   r.previous_step);
    answer(res, 200, nlohmann::json{{"reloaded", r.reloaded},
                                    {"checkpoint", r.checkpoint},
                                    {"model_step", r.step},
                                    {"previous_step", r.previous_step}}
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } catch (const std::exception& e) {
    metrics_.reload_done(false);
    spdlog::warn("reload failed: {}", e.what());
    answer_error(res, 500, e.what());
  }
}

void Server::watch_loop() {
  const auto period = std::chrono::duration<double>(config_.watch_checkpoints_s);
  std::string failed;  // a checkpoint that would not load is tried again only once replaced
  std::filesystem::file_time_type failed_time;
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_changed_.wait_for(lock, period, [&] { return stop_requested_ || finished_; })) {
    lock.unlock();
    const std::string newest = translator_.newer_checkpoint();
    std::error_code ec;
    const auto newest_time = std::filesystem::last_write_time(newest, ec);
    if (!newest.empty() && !(newest == failed && newest_time == failed_time)) {
      try {
        const ReloadResult r = translator_.reload();
        metrics_.reload_done(true);
        if (r.reloaded)
          spdlog::info("{}: now serving {} (step {}, was step {})", option("watch_checkpoints"),
                       r.checkpoint, r.step, r.previous_step);
      } catch (const std::exception& e) {
        failed = newest;
        failed_time = newest_time;
        metrics_.reload_done(false);
        spdlog::warn("{}: {}", option("watch_checkpoints"), e.what());
      }
    }
    lock.lock();
  }
}

void Server::request_stop(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (stop_requested_) return;
    stop_requested_ = true;
    stop_reason_ = why;
  }
  stop_changed_.notify_all();
}

int Server::run() {
  make_room_for_connections(config_.gate.max_connections);
  int port = config_.port;
  if (port == 0) {
    port = http_.bind_to_any_port(config_.host);
  } else if (!http_.bind_to_port(config_.host, port)) {
    port = -1;
  }
  // httplib listens with a backlog of 5: a burst of clients connecting at
  // once would see connections dropped and retried a second later. Listening
  // again on the bound socket widens the backlog.
  if (port >= 0 && listen_socket_ >= 0) ::listen(listen_socket_, SOMAXCONN);
  if (port < 0)
    throw OptionError("port", "cannot listen on " + config_.host + ":" +
                                  std::to_string(config_.port) +
                                  ": the port is in use or the address is not this machine's; "
                                  "choose another {port} (0 picks a free one) or {host}");
  const std::string host =
      config_.host.find(':') != std::string::npos ? "[" + config_.host + "]" : config_.host;
  spdlog::info("listening on http://{}:{} ({})", host, port, kEndpoints);
  if (!is_loopback(config_.host))
    spdlog::warn("{}={} accepts connections from other machines{}", option("host"), config_.host,
                 keys_.enabled() ? "" : " and no " + option("api_key_file") +
                                            " is set: anyone who reaches it can translate and "
                                            "reload");
  signals_ = std::make_unique<StopSignals>([this](const std::string& name) { request_stop(name); });
  std::thread listener([this] {
    if (!http_.listen_after_bind()) spdlog::error("the HTTP listener stopped with an error");
    listener_done_ = true;
  });

  try {
    translator_.load();
  } catch (...) {
    stopping_ = true;
    stop_http(listener);
    signals_.reset();
    throw;
  }
  const auto model = translator_.current();
  if (config_.watch_checkpoints_s > 0) watch_thread_ = std::thread([this] { watch_loop(); });
  const auto& search = model->batch_translator->options().search;
  const BatchPolicy& batching = translator_.options().batching;
  spdlog::info("ready: {} (step {}) on {}, beam_size {}, alpha {}; batches of up to {} sentences, "
               "waiting at most {} ms (or {} ms without arrivals), {} decoding at once",
               model->checkpoint, model->step, translator_.device().str(), search.beam_size,
               search.alpha, batching.max_batch_size, batching.max_delay.count() / 1000.0,
               batching.quiet_gap.count() / 1000.0, translator_.queue_workers());
  return drain_and_stop(listener);
}

void Server::stop_http(std::thread& listener) {
  // httplib's stop() does nothing until its listener runs: a model that
  // fails to load at once, or a signal during start-up, comes that early.
  while (!http_.is_running() && !listener_done_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  http_.stop();
  listener.join();  // its threads end once their answers are written
}

int Server::drain_and_stop(std::thread& listener) {
  {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    stop_changed_.wait(lock, [&] { return stop_requested_; });
  }
  stopping_ = true;
  spdlog::info("{}: taking no new requests; finishing {} requests ({} sentences queued), for at "
               "most {} s ({})",
               stop_reason_, in_flight_.load(), translator_.queue_depth(),
               config_.shutdown_timeout_s, option("shutdown_timeout"));
  std::thread http_stopper([&] { stop_http(listener); });
  translator_.close_queue();  // workers take what is left without waiting for company
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(config_.shutdown_timeout_s);
  while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (in_flight_ > 0) {
    const int64_t dropped = translator_.cancel_waiting(
        "the server stopped before translating this request (" + option("shutdown_timeout") + ")");
    spdlog::warn("{}={} s passed: {} queued sentences were answered 503",
                 option("shutdown_timeout"), config_.shutdown_timeout_s, dropped);
  }
  http_stopper.join();
  translator_.join_workers();
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    finished_ = true;
  }
  stop_changed_.notify_all();
  if (watch_thread_.joinable()) watch_thread_.join();
  signals_.reset();
  spdlog::info("stopped after {} translate requests", request_ids_.load());
  return 0;
}

}  // namespace

int serve(const ServerConfig& config, Translator& translator) {
  Server server(config, translator);
  return server.run();
}

}  // namespace t2t
