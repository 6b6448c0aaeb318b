// Load generator for t2t-serve: a fixed number of POST /v1/translate
// requests, --concurrency of them in flight at once, each client thread on
// its own keep-alive connection, as concurrent users of the server would be.
// Prints one JSON line: sentences and requests per second, latency
// percentiles and errors by status. A plain HTTP client: it links neither
// libt2t nor LibTorch, so it stays light beside a server on the same
// cores, and it can measure any server that speaks the same API.
//
//   t2t-bench-serve --url=http://127.0.0.1:8080 --input=dev.en --concurrency=8
//                   --output=dev.zh
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cxxopts.hpp>
#include <sys/resource.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Target {
  std::string host;
  int port = 80;
  std::string base;  // the URL's own path, if it has one; the endpoints are under it
  std::string path;  // the translate endpoint
};

// Only loopback addresses: the benchmark floods the server it is pointed at,
// which must be one the person running it owns, on this machine.
Target parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    throw std::runtime_error("--url=" + url + " must start with http:// (t2t-serve speaks plain "
                             "HTTP on loopback)");
  std::string rest = url.substr(scheme.size());
  std::string base;
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    base = rest.substr(slash);
    rest = rest.substr(0, slash);
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  Target t;
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) throw std::runtime_error("--url=" + url + ": unclosed '['");
    t.host = rest.substr(1, close - 1);
    const std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') throw std::runtime_error("--url=" + url + ": bad port");
      port = after.substr(1);
    }
  } else {
    const size_t colon = rest.rfind(':');
    t.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (t.host != "127.0.0.1" && t.host != "localhost" && t.host != "::1")
    throw std::runtime_error("--url host '" + t.host +
                             "' is not loopback: t2t-bench-serve only loads servers on this "
                             "machine (127.0.0.1, localhost or [::1])");
  if (!port.empty()) {
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(port, &used);
    } catch (const std::exception&) {
    }
    if (used != port.size() || value < 1 || value > 65535)
      throw std::runtime_error("--url=" + url + ": port '" + port + "' is not 1..65535");
    t.port = value;
  }
  t.base = base;
  t.path = base + "/v1/translate";
  return t;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read --input=" + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  if (lines.empty()) throw std::runtime_error("--input=" + path + " is empty");
  return lines;
}

// Nearest rank: the smallest latency with at least p% of them at or below it.
double percentile(const std::vector<double>& sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(p / 100.0 * n)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

// User + system seconds of this process: on a machine the client shares
// with the server, what the load generator itself takes from the cores.
double cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// A JSON number with a few decimals: the figures are measurements, not
// exact values, and the line stays readable.
json rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

struct Options {
  Target target;
  std::vector<std::string> lines;
  int concurrency = 1;
  int64_t sentences_per_request = 1;
  int64_t requests = 0;
  std::string output;
  std::string api_key;
  int timeout_s = 60;
  double max_seconds = 600;
};

// What one client thread saw, merged once all have finished: the threads
// take no lock per request.
struct ThreadResult {
  std::vector<double> latencies_ms;  // answered 200 with a well-formed body
  std::map<std::string, int64_t> errors;
  int64_t requests = 0;
  int64_t sentences = 0;
};

class LoadRun {
 public:
  explicit LoadRun(const Options& opt)
      : opt_(opt),
        covered_(std::min<int64_t>(static_cast<int64_t>(opt.lines.size()),
                                   opt.requests * opt.sentences_per_request)),
        translations_(opt.output.empty() ? 0 : covered_) {}

  void run() {
    std::vector<std::thread> threads;
    results_.resize(opt_.concurrency);
    for (int i = 0; i < opt_.concurrency; ++i)
      threads.emplace_back([this, i] { client_loop(results_[i]); });
    // The clock starts once every thread holds its connection, so that the
    // figures are those of requests on open keep-alive connections, not of
    // how fast the server accepts a burst of new ones.
    double cpu0 = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      connected_cv_.wait(lock, [this] { return connected_ == opt_.concurrency; });
      cpu0 = cpu_seconds();
      start_ = Clock::now();
      started_ = true;
    }
    connected_cv_.notify_all();
    std::thread progress([this] { report_progress(); });
    for (auto& t : threads) t.join();
    seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
    cpu_seconds_ = cpu_seconds() - cpu0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    done_.notify_all();
    progress.join();
  }

  // Prints the summary line; returns the exit status.
  int summarize() const {
    std::vector<double> latencies;
    std::map<std::string, int64_t> errors;
    int64_t requests = 0, sentences = 0, failed = 0;
    for (const auto& r : results_) {
      latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
      for (const auto& [key, count] : r.errors) {
        errors[key] += count;
        failed += count;
      }
      requests += r.requests;
      sentences += r.sentences;
    }
    std::sort(latencies.begin(), latencies.end());
    nlohmann::ordered_json latency = nlohmann::ordered_json::object();
    for (const auto& [name, p] : {std::pair<const char*, double>{"p50", 50}, {"p90", 90}, {"p99", 99}})
      latency[name] = latencies.empty() ? json(nullptr) : rounded(percentile(latencies, p), 3);
    latency["max"] = latencies.empty() ? json(nullptr) : rounded(latencies.back(), 3);

    const int64_t sent = next_request_.load() < opt_.requests ? next_request_.load() : opt_.requests;
    nlohmann::ordered_json out;
    out["concurrency"] = opt_.concurrency;
    out["requests"] = requests;
    out["sentences"] = sentences;
    out["seconds"] = rounded(seconds_, 4);
    out["sentences_per_second"] = rounded(seconds_ > 0 ? sentences / seconds_ : 0.0, 2);
    out["requests_per_second"] =
        rounded(seconds_ > 0 ? static_cast<double>(requests - failed) / seconds_ : 0.0, 2);
    out["latency_ms"] = latency;
    out["errors"] = errors;
    out["sentences_per_request"] = opt_.sentences_per_request;
    out["requests_planned"] = opt_.requests;
    out["stopped_by_max_seconds"] = sent < opt_.requests;
    out["client_cpu_seconds"] = rounded(cpu_seconds_, 3);
    std::cout << out.dump() << std::endl;

    if (sent < opt_.requests)
      std::cerr << "t2t-bench-serve: stopped after --max_seconds=" << opt_.max_seconds << ": "
                << sent << " of " << opt_.requests << " requests sent" << std::endl;
    if (failed > 0) {
      std::cerr << "t2t-bench-serve: " << failed << " of " << requests << " requests failed (";
      bool first = true;
      for (const auto& [key, count] : errors) {
        std::cerr << (first ? "" : ", ") << key << ": " << count;
        first = false;
      }
      std::cerr << "); first: " << first_error_ << std::endl;
      return 1;
    }
    return 0;
  }

  // The covered lines in input order, a failed or unsent one as an empty
  // line, so that line k of the file is always line k of the input.
  void write_output() const {
    if (opt_.output.empty()) return;
    const int64_t sent = std::min<int64_t>(next_request_.load(), opt_.requests);
    const int64_t lines = std::min<int64_t>(covered_, sent * opt_.sentences_per_request);
    // Through a temporary file and a rename, so that a reader never sees a
    // half-written file under the final name.
    const std::string tmp = opt_.output + ".tmp." + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw std::runtime_error("cannot write " + tmp);
      for (int64_t i = 0; i < lines; ++i) out << translations_[i] << '\n';
      out.close();
      if (!out) throw std::runtime_error("could not write " + tmp);
    }
    if (std::rename(tmp.c_str(), opt_.output.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot rename " + tmp + " to --output=" + opt_.output);
    }
  }

 private:
  void client_loop(ThreadResult& result) {
    httplib::Client client(opt_.target.host, opt_.target.port);
    client.set_keep_alive(true);
    // httplib writes a request's headers and body separately; with Nagle's
    // algorithm the body would wait for the server's delayed ACK, adding
    // tens of milliseconds to every request that are no part of the server.
    client.set_tcp_nodelay(true);
    client.set_connection_timeout(opt_.timeout_s, 0);
    client.set_read_timeout(opt_.timeout_s, 0);
    client.set_write_timeout(opt_.timeout_s, 0);
    httplib::Headers headers;
    if (!opt_.api_key.empty()) headers.emplace("Authorization", "Bearer " + opt_.api_key);
    // Any answer will do, even an error: it only opens the connection. A
    // failure here is not counted; the first timed request connects again.
    client.Get(opt_.target.base + "/ready", headers);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++connected_;
      connected_cv_.notify_all();
      connected_cv_.wait(lock, [this] { return started_; });
    }
    const auto deadline =
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt_.max_seconds));
    const int64_t n_lines = static_cast<int64_t>(opt_.lines.size());

    for (;;) {
      if (Clock::now() >= deadline) return;
      const int64_t index = next_request_.fetch_add(1);
      if (index >= opt_.requests) return;
      const int64_t first = index * opt_.sentences_per_request;
      json texts = json::array();
      for (int64_t k = 0; k < opt_.sentences_per_request; ++k)
        texts.push_back(opt_.lines[(first + k) % n_lines]);
      const std::string body =
          json{{"text", texts}}.dump(-1, ' ', false, json::error_handler_t::replace);

      const auto sent_at = Clock::now();
      const auto res = client.Post(opt_.target.path, headers, body, "application/json");
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent_at).count();
      ++result.requests;
      completed_.fetch_add(1, std::memory_order_relaxed);
      if (!res) {
        // httplib reports a read timeout as a read error: the time tells them apart.
        fail(result, "connection", "no answer (" + httplib::to_string(res.error()) + " error after " +
                                       std::to_string(static_cast<int64_t>(ms)) + " ms; --timeout_s=" +
                                       std::to_string(opt_.timeout_s) + ")");
        continue;
      }
      if (res->status != 200) {
        fail(result, std::to_string(res->status),
             "HTTP " + std::to_string(res->status) + ": " + res->body.substr(0, 500));
        continue;
      }
      std::vector<std::string> translations;
      if (!parse_translations(res->body, texts.size(), translations)) {
        fail(result, "invalid_response", "HTTP 200 with an unexpected body: " + res->body.substr(0, 500));
        continue;
      }
      result.latencies_ms.push_back(ms);
      result.sentences += opt_.sentences_per_request;
      sentences_done_.fetch_add(opt_.sentences_per_request, std::memory_order_relaxed);
      for (int64_t k = 0; k < opt_.sentences_per_request; ++k) {
        const int64_t line = first + k;
        // Each line below covered_ belongs to exactly one request, so no
        // two threads write the same element.
        if (line < static_cast<int64_t>(translations_.size())) translations_[line] = translations[k];
      }
    }
  }

  static bool parse_translations(const std::string& body, size_t expected,
                                 std::vector<std::string>& out) {
    json doc = json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("translations")) return false;
    const json& list = doc["translations"];
    if (!list.is_array() || list.size() != expected) return false;
    for (const json& t : list) {
      if (!t.is_string()) return false;
      std::string text = t.get<std::string>();
      // One translation a line in --output, whatever the model produced.
      std::replace(text.begin(), text.end(), '\n', ' ');
      out.push_back(std::move(text));
    }
    return true;
  }

  void fail(ThreadResult& result, const std::string& key, const std::string& message) {
    ++result.errors[key];
    failures_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_error_.empty()) first_error_ = message;
  }

  // A line on stderr every few seconds, so a slow run shows it is moving.
  void report_progress() {
    constexpr auto kEvery = std::chrono::seconds(5);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_.wait_for(lock, kEvery, [this] { return finished_; })) {
      const double s = std::chrono::duration<double>(Clock::now() - start_).count();
      const int64_t sentences = sentences_done_.load(std::memory_order_relaxed);
      std::fprintf(stderr,
                   "t2t-bench-serve: %.0f s, %lld of %lld requests, %.1f sentences/s, "
                   "%lld failed\n",
                   s, static_cast<long long>(completed_.load(std::memory_order_relaxed)),
                   static_cast<long long>(opt_.requests), sentences / s,
                   static_cast<long long>(failures_.load(std::memory_order_relaxed)));
    }
  }

  const Options& opt_;
  const int64_t covered_;
  std::vector<std::string> translations_;
  std::vector<ThreadResult> results_;
  std::atomic<int64_t> next_request_{0};
  std::atomic<int64_t> completed_{0};
  std::atomic<int64_t> sentences_done_{0};
  std::atomic<int64_t> failures_{0};
  Clock::time_point start_;
  double seconds_ = 0;
  double cpu_seconds_ = 0;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::condition_variable connected_cv_;
  int connected_ = 0;
  bool started_ = false;
  std::string first_error_;
};

int run(const cxxopts::ParseResult& flags) {
  Options opt;
  if (!flags.count("url")) throw std::runtime_error("--url is required, e.g. --url=http://127.0.0.1:8080");
  if (!flags.count("input")) throw std::runtime_error("--input is required: a text file, one sentence a line");
  opt.target = parse_url(flags["url"].as<std::string>());
  opt.lines = read_lines(flags["input"].as<std::string>());
  opt.concurrency = flags["concurrency"].as<int>();
  if (opt.concurrency < 1 || opt.concurrency > 4096)
    throw std::runtime_error("--concurrency must be between 1 and 4096");
  opt.sentences_per_request = flags["sentences_per_request"].as<int64_t>();
  if (opt.sentences_per_request < 1) throw std::runtime_error("--sentences_per_request must be at least 1");
  const auto n = static_cast<int64_t>(opt.lines.size());
  opt.requests = flags["requests"].as<int64_t>();
  if (opt.requests < 0) throw std::runtime_error("--requests must be >= 0 (0: cover --input once)");
  if (opt.requests == 0) opt.requests = (n + opt.sentences_per_request - 1) / opt.sentences_per_request;
  opt.output = flags["output"].as<std::string>();
  opt.api_key = flags["api_key"].as<std::string>();
  opt.timeout_s = flags["timeout_s"].as<int>();
  if (opt.timeout_s < 1) throw std::runtime_error("--timeout_s must be at least 1");
  opt.max_seconds = flags["max_seconds"].as<double>();
  if (!(opt.max_seconds > 0)) throw std::runtime_error("--max_seconds must be positive");

  LoadRun load(opt);
  load.run();
  load.write_output();
  return load.summarize();
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options(
      "t2t-bench-serve",
      "Load generator for t2t-serve: sends POST /v1/translate requests, --concurrency at once\n"
      "(one keep-alive connection per client thread), and prints one JSON line: concurrency,\n"
      "requests, sentences, seconds, sentences_per_second, requests_per_second (answered 200),\n"
      "latency_ms {p50, p90, p99, max} (nearest rank, over the requests answered 200) and\n"
      "errors {HTTP status, \"connection\" or \"invalid_response\": count}. Each thread opens its\n"
      "connection (GET /ready) before the clock starts. Request i carries\n"
      "--sentences_per_request consecutive lines of --input from line i * that, cycling.\n"
      "Exit status 1 if any request failed (the summary is printed first). Loopback only.\n"
      "  t2t-bench-serve --url=http://127.0.0.1:8080 --input=dev.en --concurrency=8\n");
  options.add_options()  //
      ("h,help", "Print this help and exit.")  //
      ("url", "The server, http://127.0.0.1:PORT (or localhost, [::1]); requests go to its "
       "/v1/translate.", cxxopts::value<std::string>())  //
      ("input", "Source sentences, one a line.", cxxopts::value<std::string>())  //
      ("concurrency", "Client threads, each with one request in flight at a time.",
       cxxopts::value<int>()->default_value("1"))  //
      ("sentences_per_request", "Lines of --input in each request's \"text\".",
       cxxopts::value<int64_t>()->default_value("1"))  //
      ("requests", "Requests to send in all; 0: enough to cover --input once.",
       cxxopts::value<int64_t>()->default_value("0"))  //
      ("output", "Write the translation of each line the requests covered (the first pass over "
       "--input), in input order, one a line; a failed one as an empty line.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("api_key", "Send 'Authorization: Bearer KEY' (servers started with --api_key_file).",
       cxxopts::value<std::string>()->default_value(""))  //
      ("timeout_s", "Per request: seconds to connect, to send, and to wait for the answer.",
       cxxopts::value<int>()->default_value("60"))  //
      ("max_seconds", "Send no new request after this many seconds (those in flight finish, "
       "within --timeout_s), so that a run always ends.",
       cxxopts::value<double>()->default_value("600"));
  try {
    const auto flags = options.parse(argc, argv);
    if (flags.count("help")) {
      std::cout << options.help() << std::endl;
      return 0;
    }
    if (!flags.unmatched().empty())
      throw std::runtime_error("unexpected argument '" + flags.unmatched().front() + "'");
    return run(flags);
  } catch (const std::exception& e) {
    std::cerr << "t2t-bench-serve: " << e.what() << std::endl;
    return 1;
  }
}
