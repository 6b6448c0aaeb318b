// t2t-serve against hostile clients: the real binary on a loopback port,
// attacked over raw sockets (slowloris, slow bodies, oversized and endless
// headers, a connection flood, malformed chunked bodies, clients that hang
// up mid-request, pathological JSON) while well-behaved clients translate.
// The server must stay up, answer each hostile request with an error status
// or a closed connection within its timeouts, keep its memory bounded, and
// keep answering the good clients about as fast as when idle.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/sample_run.h"
#include "tests/support/serve_process.h"
#include "tests/support/test_util.h"

using nlohmann::json;
using t2t::test::run_command;
using t2t::test::SampleRun;
using t2t::test::trained_sample_run;
using t2t::test::ServeProcess;
using t2t::test::TempDir;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The server runs with short timeouts and small limits, so that the attacks
// reach them quickly; kSlack is how much later than its timeout it may drop
// a client (poll rounds, a loaded CI machine).
constexpr double kHeaderTimeout = 2;
constexpr double kBodyTimeout = 2;
constexpr double kSlack = 3;
constexpr int kMaxConnections = 100;
const std::string kServerFlags =
    "--decode_hparams='beam_size=2,extra_length=5' --threads=2 --max_batch_delay_ms=1 "
    "--http_threads=8 --max_connections=" + std::to_string(kMaxConnections) +
    " --max_waiting_requests=64 --header_timeout=2 --body_timeout=2 --keep_alive_timeout=2 "
    "--write_timeout=5 --max_header_bytes=16384";

const SampleRun& trained() { return trained_sample_run("hostile_run"); }

int64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `data` unless the server closes first or timeout_s passes (false then).
bool send_all(int fd, const std::string& data, double timeout_s = 5) {
  const auto start = Clock::now();
  size_t sent = 0;
  while (sent < data.size()) {
    const double left = timeout_s - since(start);
    if (left <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
    const ssize_t n =
        ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  return true;
}

// What came back on a connection.
struct Answer {
  int status = 0;        // the final (non-1xx) HTTP status; 0: none
  bool closed = false;   // the server closed or reset the connection
  double seconds = 0;    // until the answer or the close
  std::string text;      // the bytes received
  // An error status or a closed connection: what a hostile request may get.
  bool refused() const { return status >= 400 || (status == 0 && closed); }
  std::string outcome() const {
    return (status ? std::to_string(status) : std::string(closed ? "closed" : "nothing")) +
           " after " + std::to_string(seconds).substr(0, 5) + " s";
  }
  std::string describe() const {
    return outcome() + (status && closed ? ", then closed" : "") + ": " +
           json(text.substr(0, 300)).dump(-1, ' ', true, json::error_handler_t::replace);
  }
};

// The final status of the response at the start of `text` once its status
// line is in, skipping 1xx interim responses; 0 before.
int final_status(const std::string& text, size_t* body_at = nullptr) {
  size_t at = 0;
  for (;;) {
    const size_t line_end = text.find("\r\n", at);
    if (line_end == std::string::npos || text.compare(at, 7, "HTTP/1.") != 0 ||
        line_end < at + 12)
      return 0;
    const int status = std::atoi(text.c_str() + at + 9);
    const size_t head_end = text.find("\r\n\r\n", at);
    if (status >= 200 || status < 100) {
      if (body_at) *body_at = head_end == std::string::npos ? std::string::npos : head_end + 4;
      return status;
    }
    if (head_end == std::string::npos) return 0;
    at = head_end + 4;
  }
}

// Whether `text` holds a whole response (its Content-Length of body).
bool whole_response(const std::string& text) {
  size_t body_at = 0;
  if (final_status(text, &body_at) == 0 || body_at == std::string::npos) return false;
  const std::string head = text.substr(0, body_at);
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  const size_t cl = lower.find("\r\ncontent-length:");
  if (cl == std::string::npos) return true;
  return text.size() - body_at >= std::stoull(head.substr(cl + 17));
}

// Reads until a whole final response or the close, for at most timeout_s.
Answer await_answer(int fd, double timeout_s, Clock::time_point start = Clock::now()) {
  Answer a;
  char buf[16384];
  while (since(start) < timeout_s) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      a.closed = true;
      break;
    }
    a.text.append(buf, static_cast<size_t>(n));
    if (whole_response(a.text)) break;
  }
  a.status = final_status(a.text);
  a.seconds = since(start);
  return a;
}

// One request on a connection of its own.
Answer exchange(int port, const std::string& request, double timeout_s) {
  const auto start = Clock::now();
  const int fd = connect_loopback(port);
  if (fd < 0) return Answer{0, true, 0, "cannot connect"};
  send_all(fd, request, timeout_s);
  Answer a = await_answer(fd, timeout_s, start);
  ::close(fd);
  return a;
}

std::string post_head(size_t content_length, const std::string& extra = "") {
  return "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " + std::to_string(content_length) + "\r\n" + extra + "\r\n";
}

std::string post(const std::string& body) { return post_head(body.size()) + body; }

const std::string kChunkedHead =
    "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";

// n connections that each send `head`, then one byte of `drip` (cycled;
// none if empty) every gap_s while the server keeps them open, for at most
// limit_s: how each ended, its seconds counted from its connect.
std::vector<Answer> trickle(int port, int n, const std::string& head, const std::string& drip,
                            double gap_s, double limit_s) {
  struct Conn {
    int fd;
    Clock::time_point start;
    size_t dripped = 0;
    bool done = false;
    Answer answer;
  };
  std::vector<Conn> conns;
  for (int i = 0; i < n; ++i) {
    Conn c{connect_loopback(port), Clock::now(), 0, false, Answer{}};
    if (c.fd < 0 || (!head.empty() && !send_all(c.fd, head, 1))) {
      c.done = true;
      c.answer.closed = true;
    }
    conns.push_back(std::move(c));
  }
  const auto start = Clock::now();
  char buf[4096];
  for (size_t open = conns.size(); open > 0 && since(start) < limit_s;) {
    open = 0;
    for (Conn& c : conns) {
      if (c.done) continue;
      // Whatever the server sent, then the next byte.
      for (;;) {
        const ssize_t got = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (got > 0) {
          c.answer.text.append(buf, static_cast<size_t>(got));
          continue;
        }
        if (got == 0 || (errno != EAGAIN && errno != EINTR)) c.answer.closed = true;
        break;
      }
      c.answer.status = final_status(c.answer.text);
      if (!c.answer.closed && c.answer.status == 0 && !drip.empty()) {
        const char byte = drip[c.dripped++ % drip.size()];
        if (::send(c.fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
          c.answer.closed = true;
      }
      if (c.answer.closed || c.answer.status != 0) {
        c.done = true;
        c.answer.seconds = since(c.start);
      } else {
        ++open;
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(gap_s));
  }
  std::vector<Answer> out;
  for (Conn& c : conns) {
    if (!c.done) c.answer.seconds = since(c.start);
    if (c.fd >= 0) ::close(c.fd);
    out.push_back(std::move(c.answer));
  }
  return out;
}

// Sends `head`, then `filler` again and again as fast as the server reads,
// until it answers or closes, `max_bytes` are sent or limit_s passes.
Answer flood_bytes(int port, const std::string& head, const std::string& filler,
                   size_t max_bytes, double limit_s) {
  const auto start = Clock::now();
  const int fd = connect_loopback(port);
  if (fd < 0) return Answer{0, true, 0, "cannot connect"};
  bool open = send_all(fd, head, limit_s);
  std::string block;
  while (block.size() < 65536) block += filler;
  for (size_t sent = head.size(); open && sent < max_bytes && since(start) < limit_s;
       sent += block.size()) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) break;  // an answer or the close
    open = send_all(fd, block, limit_s - since(start));
  }
  Answer a = await_answer(fd, limit_s, start);
  if (!open) a.closed = true;
  ::close(fd);
  return a;
}

// Connections that come and go mid-request, some with a reset.
void hang_ups(int port, int rounds) {
  const std::string body = json{{"text", {"Hello there."}}}.dump();
  const std::string request = post(body);
  for (int i = 0; i < rounds; ++i) {
    const int fd = connect_loopback(port);
    if (fd < 0) continue;
    switch (i % 6) {
      case 0: break;  // connect, then close
      case 1: send_all(fd, request.substr(0, 20), 1); break;
      case 2: send_all(fd, request.substr(0, request.size() - body.size() / 2), 1); break;
      case 3: send_all(fd, request, 1); break;  // the answer goes to a closed socket
      case 4:
      case 5: {
        send_all(fd, i % 2 ? request : request.substr(0, 30), 1);
        const linger reset{1, 0};  // close with a reset, not a FIN
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        break;
      }
    }
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The p-quantile of `values` (sorted here).
double quantile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t at = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size()))) - 1;
  return values[std::min(at, values.size() - 1)];
}

// Well-behaved clients: each POSTs one short sentence after another, as the
// other end-to-end tests' clients do, until `stop`, `max_each` requests or
// limit_s; the latency of each answer in ms, and what failed.
struct GoodClients {
  std::mutex mutex;
  std::vector<double> ms;
  std::vector<std::string> failures;

  void run(int port, int clients, int max_each, double limit_s, const std::atomic<bool>& stop) {
    const std::vector<std::string> texts = {"Hello there.", "How are you?", "I like music.",
                                            "Where is the station?"};
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int k = 0; k < clients; ++k)
      threads.emplace_back([&, k] {
        httplib::Client client("127.0.0.1", port);
        client.set_connection_timeout(10, 0);
        client.set_read_timeout(30, 0);
        for (int i = 0; i < max_each && !stop && since(start) < limit_s; ++i) {
          const std::string body = json{{"text", {texts[(i + k) % texts.size()]}}}.dump();
          const auto t0 = Clock::now();
          auto res = client.Post("/v1/translate", body, "application/json");
          const double took = since(t0) * 1000;
          std::lock_guard<std::mutex> lock(mutex);
          if (res && res->status == 200 &&
              json::parse(res->body, nullptr, false).contains("translations"))
            ms.push_back(took);
          else
            failures.push_back("status " + std::to_string(res ? res->status : -1) + " after " +
                               std::to_string(took) + " ms" + (res ? ": " + res->body : ""));
        }
      });
    for (auto& t : threads) t.join();
  }
};

}  // namespace

TEST_CASE("t2t-serve withstands hostile clients while it keeps serving good ones",
          "[serve][hostile]") {
  const auto& t = trained();
  TempDir dir("serve_hostile");
  ServeProcess server(t.model_flags() + " " + kServerFlags, dir / "serve.log");
  {
    INFO(server.log());
    REQUIRE(server.ok());
  }
  const int port = server.port();

  // Sanity first: what the attacks must not break. A chunked request, an
  // Expect: 100-continue one, and two requests pipelined on one connection.
  {
    const std::string body = json{{"text", {"Hello there."}}}.dump();
    const std::string half = body.substr(0, body.size() / 2), rest = body.substr(half.size());
    char size1[16], size2[16];
    std::snprintf(size1, sizeof(size1), "%zx\r\n", half.size());
    std::snprintf(size2, sizeof(size2), "%zx\r\n", rest.size());
    Answer chunked = exchange(
        port, kChunkedHead + size1 + half + "\r\n" + size2 + rest + "\r\n0\r\n\r\n", 30);
    INFO(chunked.describe());
    CHECK(chunked.status == 200);

    const int fd = connect_loopback(port);
    REQUIRE(fd >= 0);
    send_all(fd, post_head(body.size(), "Expect: 100-continue\r\n"));
    std::string interim(64, '\0');
    pollfd p{fd, POLLIN, 0};
    const bool continued = ::poll(&p, 1, 3000) > 0 &&
                           ::recv(fd, interim.data(), interim.size(), 0) > 0 &&
                           interim.rfind("HTTP/1.1 100", 0) == 0;
    CHECK(continued);
    send_all(fd, body);
    Answer expected = await_answer(fd, 30);
    INFO(expected.describe());
    CHECK(expected.status == 200);
    ::close(fd);

    const std::string health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    const int piped = connect_loopback(port);
    REQUIRE(piped >= 0);
    send_all(piped, health + post(body) + health);
    std::string got;
    const auto start = Clock::now();
    auto answers = [&] {
      size_t n = 0;
      for (size_t at = got.find("HTTP/1.1 200"); at != std::string::npos;
           at = got.find("HTTP/1.1 200", at + 1))
        ++n;
      return n;
    };
    char buf[4096];
    while (answers() < 3 && since(start) < 30) {
      pollfd q{piped, POLLIN, 0};
      if (::poll(&q, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(piped, buf, sizeof(buf), 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    INFO(got);
    CHECK(answers() == 3);
    ::close(piped);
  }

  // The idle server's latency, by the same clients that will run under attack.
  std::atomic<bool> never{false};
  GoodClients idle;
  idle.run(port, 2, 100, 60, never);
  for (size_t i = 0; i < std::min<size_t>(idle.failures.size(), 5); ++i)
    FAIL_CHECK("idle: " << idle.failures[i]);
  REQUIRE(idle.ms.size() >= 100);
  const double idle_p50 = quantile(idle.ms, 0.5), idle_p99 = quantile(idle.ms, 0.99);
  const int64_t rss_before = rss_kib(server.pid());

  // The attacks, while the good clients go on: first all but the flood at
  // once (fewer connections than --max_connections, so that each meets the
  // timeout or limit it aims at), then the flood.
  std::mutex mutex;
  std::vector<std::string> bad;  // hostile requests that were not refused in time
  std::vector<std::string> notes;
  auto expect_refused = [&](const std::string& what, const Answer& a, double within,
                            std::vector<int> statuses = {}) {
    const bool status_ok = statuses.empty()
                               ? a.refused()
                               : std::find(statuses.begin(), statuses.end(), a.status) !=
                                     statuses.end();
    std::lock_guard<std::mutex> lock(mutex);
    notes.push_back(what + ": " + a.outcome());
    if (!status_ok || a.seconds > within) bad.push_back(what + ": " + a.describe());
  };
  auto summarize = [&](const std::string& what, const std::vector<Answer>& answers,
                       double within) {
    int refused = 0;
    std::map<std::string, int> outcomes;  // status (or "closed") -> count
    double first = 1e9, last = 0;
    for (const Answer& a : answers) {
      refused += a.refused() && a.seconds <= within;
      ++outcomes[a.status ? std::to_string(a.status) : a.closed ? "closed" : "nothing"];
      first = std::min(first, a.seconds);
      last = std::max(last, a.seconds);
    }
    std::string counts;
    for (const auto& [outcome, n] : outcomes)
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " x " + outcome;
    std::lock_guard<std::mutex> lock(mutex);
    notes.push_back(what + ": " + std::to_string(refused) + " of " +
                    std::to_string(answers.size()) + " refused within " +
                    std::to_string(within).substr(0, 4) + " s (" + counts + ") after " +
                    std::to_string(first).substr(0, 5) + " to " +
                    std::to_string(last).substr(0, 5) + " s");
    for (const Answer& a : answers)
      if (!a.refused() || a.seconds > within) {
        bad.push_back(what + ": " + a.describe());
        break;
      }
  };

  const auto attack_start = Clock::now();
  std::atomic<bool> attacks_done{false};
  std::atomic<int64_t> rss_peak{rss_before};
  std::thread rss_watch([&] {
    while (!attacks_done) {
      rss_peak = std::max<int64_t>(rss_peak, rss_kib(server.pid()));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  GoodClients loaded;
  std::thread good([&] { loaded.run(port, 2, 100000, 90, attacks_done); });

  const double header_limit = kHeaderTimeout + kSlack, body_limit = kBodyTimeout + kSlack;
  std::vector<std::function<void()>> attacks = {
      [&] {  // slowloris: headers that never end, a byte at a time
        summarize("slowloris", trickle(port, 40, "POST /v1/translate HTTP/1.1\r\nHost: x\r\n",
                                       "X-Slow: 1\r\n", 0.1, header_limit + 2),
                  header_limit);
      },
      [&] {  // a body that trickles in
        summarize("slow body", trickle(port, 20, post_head(2000), "[", 0.1, body_limit + 2),
                  body_limit);
      },
      [&] {  // oversized request lines and headers, and headers without end
        const double limit = header_limit;
        expect_refused("100 KB request line",
                       exchange(port, "GET /" + std::string(100000, 'a') +
                                          " HTTP/1.1\r\nHost: x\r\n\r\n", limit),
                       limit);
        expect_refused("100 KB header",
                       exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                          std::string(100000, 'b') + "\r\n\r\n", limit),
                       limit);
        std::string many = "GET /health HTTP/1.1\r\nHost: x\r\n";
        for (int i = 0; i < 20000; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
        expect_refused("20000 headers", exchange(port, many + "\r\n", limit), limit);
        expect_refused("endless headers",
                       flood_bytes(port, "GET /health HTTP/1.1\r\n", "X-Flood: aaaaaaaaaa\r\n",
                                   64 << 20, limit),
                       limit);
        expect_refused("endless request line",
                       flood_bytes(port, "GET /", "a", 64 << 20, limit), limit);
      },
      [&] {  // malformed chunked bodies
        const double limit = body_limit;
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"bad hex size", kChunkedHead + "zz\r\n{}\r\n0\r\n\r\n"},
            {"negative size", kChunkedHead + "-1\r\n{}\r\n0\r\n\r\n"},
            {"missing CRLF after data", kChunkedHead + "2\r\n{}XX0\r\n\r\n"},
            {"size line without end", kChunkedHead + "2;" + std::string(20000, 'x')},
            {"huge size", kChunkedHead + "FFFFFFFFFFFFFFFFFFFF\r\n{}"},
            {"2^64-1 size", kChunkedHead + "FFFFFFFFFFFFFFFF\r\n{}"},
            {"size beyond the body limit", kChunkedHead + "7fffffff\r\n{\"text\": [\"a\"]}"},
            {"trailer garbage", kChunkedHead + "2\r\n{}\r\n0\r\nno colon here\r\n\r\n"},
            {"chunked and Content-Length",
             "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
             "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
            {"unknown transfer coding",
             "POST /v1/translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
             "2\r\n{}\r\n0\r\n\r\n"},
            {"two Content-Lengths",
             "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
             "Content-Length: 40\r\n\r\n{}"},
            {"negative Content-Length",
             "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}"},
            {"Content-Length 2^64",
             "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n"
             "\r\n{}"},
        };
        for (const auto& [what, request] : cases)
          expect_refused("framing: " + what, exchange(port, request, limit), limit);
        // Endless chunks of data past --max_request_bytes.
        expect_refused("chunked: endless 64 KB chunks",
                       flood_bytes(port, kChunkedHead,
                                   "10000\r\n" + std::string(65536, ' ') + "\r\n", 64 << 20,
                                   limit),
                       limit, {413});
        expect_refused("chunked: one endless chunk",
                       flood_bytes(port, kChunkedHead + "7fffffffffff\r\n", " ", 64 << 20, limit),
                       limit, {413});
        expect_refused("Content-Length beyond the limit, then the bytes",
                       flood_bytes(port, post_head(size_t{1} << 40), " ", 64 << 20, limit), limit,
                       {413});
      },
      [&] { hang_ups(port, 120); },
      [&] {  // what JSON parsers choke on
        const double limit = 30;
        const std::string deep = std::string(400000, '[') + std::string(400000, ']');
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"nested 400000 deep", deep},
            {"nested 400000 deep in text", "{\"text\": " + deep + "}"},
            {"nested unclosed", std::string(900000, '[')},
            {"objects nested 100000 deep",
             [] {
               std::string s;
               for (int i = 0; i < 100000; ++i) s += "{\"a\":";
               return s + "1" + std::string(100000, '}');
             }()},
            {"beam_size 1e999999", R"({"text": ["a"], "beam_size": 1e999999})"},
            {"beam_size -1e999999", R"({"text": ["a"], "beam_size": -1e999999})"},
            {"beam_size 99999999999999999999999",
             R"({"text": ["a"], "beam_size": 99999999999999999999999})"},
            {"beam_size -99999999999999999999999",
             R"({"text": ["a"], "beam_size": -99999999999999999999999})"},
            {"n_best 18446744073709551616", R"({"text": ["a"], "n_best": 18446744073709551616})"},
            {"alpha 1e999999", R"({"text": ["a"], "alpha": 1e999999})"},
            {"patience 1e-99999999999 and an unknown field",
             R"({"text": ["a"], "patience": 1e-99999999999, "x": 1})"},
            {"a number of 100000 digits",
             "{\"text\": [\"a\"], \"beam_size\": " + std::string(100000, '9') + "}"},
            {"invalid UTF-8 in a text", "{\"text\": [\"caf\xe9 \xff\xfe\"]}"},
            {"overlong UTF-8 in a text", "{\"text\": [\"\xc0\xaf\"]}"},
            {"UTF-8 surrogate in a text", "{\"text\": [\"\xed\xa0\x80\"]}"},
            {"cut UTF-8 in a text", "{\"text\": [\"\xe4\xbd\"]}"},
            {"lone surrogate escape", R"({"text": ["\ud800"]})"},
            {"invalid UTF-8 in a key", "{\"text\": [\"a\"], \"\xff\xfe\": 1}"},
            {"NUL in a string", [] {
               const char text[] = "{\"text\": [\"a\0b\"]}";
               return std::string(text, sizeof(text) - 1);
             }()},
        };
        for (const auto& [what, body] : cases) {
          Answer a = exchange(port, post(body), limit);
          expect_refused("JSON: " + what, a, limit, {400});
          const json answer = json::parse(a.text.substr(std::min(a.text.size(),
                                                                 a.text.find("\r\n\r\n") + 4)),
                                          nullptr, false);
          std::lock_guard<std::mutex> lock(mutex);
          if (!answer.is_object() || !answer.contains("error"))
            bad.push_back("JSON: " + what + ": no JSON error: " + a.describe());
          else if (what.rfind("nested", 0) == 0 || what.rfind("objects nested", 0) == 0)
            notes.push_back("JSON: " + what + ": " + answer["error"].get<std::string>());
        }
        // Invalid UTF-8 in the path and a header.
        expect_refused("invalid UTF-8 in the path",
                       exchange(port, "GET /\xff\xfe\xc0\xaf HTTP/1.1\r\nHost: x\r\n\r\n", limit),
                       limit, {400, 404});
      },
  };
  std::vector<std::thread> attackers;
  for (auto& attack : attacks) attackers.emplace_back(attack);
  for (auto& a : attackers) a.join();
  // Connections beyond the limit that send nothing: the oldest make room.
  summarize("connection flood", trickle(port, 3 * kMaxConnections, "", "", 0.05, header_limit + 2),
            header_limit);
  const double attack_seconds = since(attack_start);
  attacks_done = true;
  good.join();
  rss_watch.join();

  // Still alive, answering, and not swollen.
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  auto health = client.Get("/health");
  CHECK(server.exited() < 0);
  REQUIRE(health);
  CHECK(health->status == 200);
  const int64_t rss_after = rss_kib(server.pid());
  auto metrics = client.Get("/metrics");

  std::string all_notes;
  for (const auto& n : notes) all_notes += n + "\n";
  WARN("what the hostile requests got:\n" << all_notes);
  for (const auto& b : bad) FAIL_CHECK("not refused in time: " << b);
  CHECK(bad.empty());
  for (size_t i = 0; i < std::min<size_t>(loaded.failures.size(), 10); ++i)
    FAIL_CHECK("good client under attack: " << loaded.failures[i]);
  CHECK(loaded.failures.empty());
  REQUIRE(loaded.ms.size() >= 20);

  const double loaded_p50 = quantile(loaded.ms, 0.5), loaded_p99 = quantile(loaded.ms, 0.99);
  const double idle_max = quantile(idle.ms, 1), loaded_max = quantile(loaded.ms, 1);
  WARN("good clients' latency: idle p50 " << idle_p50 << " ms, p99 " << idle_p99 << " ms, max "
       << idle_max << " ms (" << idle.ms.size() << " requests); under attack p50 " << loaded_p50
       << " ms, p99 " << loaded_p99 << " ms, max " << loaded_max << " ms (" << loaded.ms.size()
       << " requests over " << attack_seconds << " s)");
  WARN("server RSS: " << rss_before / 1024 << " MiB before the attacks, peak "
       << rss_peak / 1024 << " MiB, " << rss_after / 1024 << " MiB after");
  if (metrics) {
    std::string dropped;
    for (size_t at = metrics->body.find("t2t_http_connections_refused_total{");
         at != std::string::npos;
         at = metrics->body.find("t2t_http_connections_refused_total{", at + 1))
      dropped += metrics->body.substr(at, metrics->body.find('\n', at) - at) + "\n";
    WARN("refused connections by reason:\n" << dropped);
  }
  // The target is p99 under attack within 2x the idle p99; this asserts 5x
  // plus 50 ms, as the attackers share this test's (possibly 2-core, loaded)
  // machine with the server.
  // Not under ThreadSanitizer, which slows the server's threads unevenly
  // (there the test looks for races, not latency).
#if defined(__SANITIZE_THREAD__)
  WARN("latency bounds not checked under ThreadSanitizer");
#else
  CHECK(loaded_p99 <= 5 * idle_p99 + 50);
  // A good request stuck behind slow clients waits for their timeouts (the
  // p99 of thousands of fast answers would hide a few of those).
  CHECK(loaded_max < 1000 * kHeaderTimeout);
#endif
  // Bounded memory: under a generous ceiling, and not grown by more than a
  // few tens of MiB (buffers the attacks make the server hold are bounded
  // by its limits and freed when it drops them).
  // Not under AddressSanitizer, whose allocator keeps freed memory in
  // quarantine (256 MiB) and whose shadow memory grows with the heap, nor
  // under ThreadSanitizer, whose shadow and access histories do too.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  WARN("RSS bounds not checked under a sanitizer");
#else
  CHECK(rss_peak < 2 * 1024 * 1024);
  CHECK(rss_peak - rss_before < 192 * 1024);
  CHECK(rss_after - rss_before < 64 * 1024);
#endif
  CHECK(server.stop() == 0);
}

TEST_CASE("t2t-serve refuses connection limits and timeouts out of range", "[serve][hostile]") {
  const auto& t = trained();
  const std::string serve = "timeout 60 ./t2t-serve " + t.model_flags() + " --port=0 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--header_timeout=0", "--header_timeout=0"},
      {"--body_timeout=-1", "--body_timeout"},
      {"--keep_alive_timeout=-1", "--keep_alive_timeout=-1"},
      {"--write_timeout=100000", "--write_timeout"},
      {"--max_connections=0", "--max_connections=0"},
      {"--max_waiting_requests=0", "--max_waiting_requests"},
      {"--max_header_bytes=100", "--max_header_bytes=100"},
      {"--max_buffered_bytes=1000", "--max_buffered_bytes"},
  };
  for (const auto& [flag, words] : cases) {
    const auto r = run_command(serve + flag);
    INFO(flag << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(words));
  }
}
