#include "t2t/serve/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "t2t/core/logging.h"
#include "t2t/serve/request_framing.h"
#include "t2t/serve/translate_api.h"

namespace t2t {

namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// How long a refused connection is read (and discarded) after its answer,
// so that closing it with unread bytes does not reset it before the client
// has read the answer; and how much is read.
constexpr double kLingerSeconds = 2;
constexpr int64_t kLingerBytes = 1 << 20;

const char* reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void peer_address(int fd, bool local, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  const int r = local ? ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ip.clear();
  port = 0;
  if (r != 0) return;
  char text[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

struct Connection {
  enum class Phase {
    kIdle,     // between requests
    kHead,     // reading the request line and headers
    kBody,     // reading a body of Content-Length bytes
    kChunked,  // reading a chunked body
    kLinger,   // answered and refused: reading what still comes, then closing
  };
  explicit Connection(int fd) : fd(fd) {}

  int fd;
  Phase phase = Phase::kHead;
  std::string buf;  // the request (and what follows it) as read
  size_t scan_at = 0;  // where the next header line starts
  size_t head_end = 0;  // the end of the headers' blank line
  size_t request_end = 0;  // the end of the whole request, once known
  Clock::time_point since;  // when this phase began: the oldest is dropped first
  Clock::time_point deadline;
  int64_t reserved = 0;  // bytes of max_buffered_bytes this request holds
  int64_t drained = 0;  // read while lingering
  bool fresh = true;  // not yet seen by the poll thread
  bool close_after = false;  // set by a worker: linger and close instead of waiting
  ChunkedBody chunks;  // in phase kChunked

  // Ready for the next request: what followed this one stays.
  void next_request(const Clock::time_point now, double keep_alive_s, double header_s) {
    buf.erase(0, std::min(request_end, buf.size()));
    if (buf.capacity() > 65536) buf.shrink_to_fit();
    scan_at = head_end = request_end = 0;
    chunks = ChunkedBody();
    since = now;
    phase = buf.empty() ? Phase::kIdle : Phase::kHead;
    deadline = now + seconds(buf.empty() ? keep_alive_s : header_s);
  }
};

// The one request a worker hands to httplib: the buffered bytes up to the
// request's end, then end of stream; answers written within the timeout.
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(const Connection& c, Clock::duration write_timeout)
      : c_(c), write_timeout_(write_timeout) {}

  bool is_readable() const override { return read_at_ < c_.request_end; }
  bool is_writable() const override { return wait_writable(); }

  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, c_.request_end - read_at_);
    std::memcpy(ptr, c_.buf.data() + read_at_, n);
    read_at_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (failed_) return -1;
    for (;;) {
      const ssize_t n = ::send(c_.fd, ptr, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait_writable()) {
        failed_ = true;
        return -1;
      }
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    peer_address(c_.fd, false, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    peer_address(c_.fd, true, ip, port);
  }
  socket_t socket() const override { return c_.fd; }

  bool consumed_all() const { return read_at_ == c_.request_end; }
  bool failed() const { return failed_; }

 private:
  // The write timeout runs from the first write: the time the handler takes
  // to translate is not the client's to answer for.
  bool wait_writable() const {
    const auto now = Clock::now();
    if (!deadline_set_) {
      deadline_ = now + write_timeout_;
      deadline_set_ = true;
    }
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
      if (left.count() < 0) return false;
      pollfd p{c_.fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
      if (r > 0) return (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
      if (r == 0) return false;
      if (errno != EINTR) return false;
    }
  }

  const Connection& c_;
  const Clock::duration write_timeout_;
  size_t read_at_ = 0;
  bool failed_ = false;
  mutable bool deadline_set_ = false;
  mutable Clock::time_point deadline_;
};

}  // namespace

class GatedHttpServer::Gate {
 public:
  Gate(GatedHttpServer& server, const GateLimits& limits, OptionSpelling spell,
       GateRefusal on_refusal)
      : server_(server),
        limits_(limits),
        spell_(std::move(spell)),
        on_refusal_(std::move(on_refusal)) {}

  ~Gate() { stop(); }

  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_) return;
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw Error(std::string("cannot create an eventfd: ") + std::strerror(errno));
    running_ = true;
    stopping_ = false;
    poller_ = std::thread([this] { poll_loop(); });
    for (int i = 0; i < std::max(1, limits_.threads); ++i)
      workers_.emplace_back([this] { work_loop(); });
  }

  // Closes the connections that wait for a request; the requests already
  // whole are answered, then the workers end.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!running_) return;
      stopping_ = true;
    }
    wake();
    inbox_space_.notify_all();
    if (poller_.joinable()) poller_.join();
    work_ready_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& c : inbox_) close_now(*c);
    inbox_.clear();
    ::close(wake_fd_);
    wake_fd_ = -1;
    running_ = false;
  }

  // From httplib's listener thread, for each accepted socket.
  void admit(int fd) {
    std::unique_lock<std::mutex> lock(mutex_);
    // The poll thread sorts the newcomers out; should it fall behind, the
    // listener waits for it, and further connections wait in the kernel's
    // listen backlog rather than in memory here.
    inbox_space_.wait(lock, [&] {
      return static_cast<int64_t>(inbox_.size()) < limits_.max_connections || !running_ ||
             stopping_;
    });
    if (!running_ || stopping_) {
      lock.unlock();
      ::close(fd);
      return;
    }
    ++open_;
    ++unseen_;
    auto c = std::make_unique<Connection>(fd);
    c->since = Clock::now();
    c->deadline = c->since + seconds(limits_.header_timeout_s);
    inbox_.push_back(std::move(c));
    lock.unlock();
    wake();
  }

 private:
  using Phase = Connection::Phase;

  std::string option(const std::string& name) const { return spell_ ? spell_(name) : name; }

  std::string busy_message() const {
    return "the server has " + std::to_string(limits_.max_connections) +
           " connections open, each with a request under way (" + option("max_connections") +
           "): retry later";
  }

  void wake() {
    const uint64_t one = 1;
    if (wake_fd_ >= 0) {
      [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    }
  }

  void release(Connection& c) {
    buffered_ -= c.reserved;
    c.reserved = 0;
  }

  bool reserve(Connection& c, int64_t bytes) {
    if (buffered_.fetch_add(bytes) + bytes > limits_.max_buffered_bytes) {
      buffered_ -= bytes;
      return false;
    }
    c.reserved += bytes;
    return true;
  }

  void close_now(Connection& c) {
    release(c);
    if (c.fd >= 0) {
      ::close(c.fd);
      c.fd = -1;
      --open_;
    }
  }

  // Answers `status` with a JSON error and Connection: close, then lingers
  // (reading and discarding what the client still sends) or closes at once.
  void answer_and_close(Connection& c, int status, const std::string& reason,
                        const std::string& message, bool linger) {
    const std::string body = error_body(message);
    std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                           "\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n" +
                           (status == 503 ? "Retry-After: 1\r\n" : "") + "\r\n" + body;
    // Best effort: the socket buffer takes an answer this small.
    [[maybe_unused]] const ssize_t n =
        ::send(c.fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    spdlog::debug("connection refused: {} ({})", reason, status);
    if (on_refusal_) on_refusal_(reason, status);
    start_linger(c, linger);
  }

  void start_linger(Connection& c, bool linger) {
    release(c);
    if (!linger) return close_now(c);
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLinger;
    c.buf.clear();
    c.buf.shrink_to_fit();
    c.drained = 0;
    c.since = Clock::now();
    c.deadline = c.since + seconds(kLingerSeconds);
  }

  // ---- the poll thread ----

  void poll_loop() {
    std::vector<pollfd> fds;
    std::vector<Connection*> polled;
    for (;;) {
      std::vector<std::unique_ptr<Connection>> arrived;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) break;
        arrived.swap(inbox_);
      }
      inbox_space_.notify_all();
      const auto now = Clock::now();
      for (auto& c : arrived) take(std::move(c), now);
      sweep(Clock::now());
      conns_.erase(std::remove_if(conns_.begin(), conns_.end(),
                                  [](const auto& c) { return !c || c->fd < 0; }),
                   conns_.end());

      fds.clear();
      polled.clear();
      fds.push_back(pollfd{wake_fd_, POLLIN, 0});
      auto next = Clock::now() + std::chrono::seconds(1);
      for (auto& c : conns_) {
        fds.push_back(pollfd{c->fd, POLLIN, 0});
        polled.push_back(c.get());
        next = std::min(next, c->deadline);
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
      const int ready = ::poll(fds.data(), fds.size(),
                               static_cast<int>(std::max<int64_t>(0, wait.count())) + 1);
      if (ready < 0 && errno != EINTR) {
        spdlog::error("the connection gate's poll failed: {}", std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (ready <= 0) continue;
      if (fds[0].revents) {
        uint64_t n;
        [[maybe_unused]] auto r = ::read(wake_fd_, &n, sizeof(n));
      }
      for (size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents) on_readable(*polled[i - 1], read_buffer_);
    }
    for (auto& c : conns_)
      if (c) close_now(*c);
    conns_.clear();
  }

  // A new connection, or one a worker hands back.
  void take(std::unique_ptr<Connection> c, Clock::time_point now) {
    if (c->close_after) {
      start_linger(*c, true);
      if (c->fd >= 0) conns_.push_back(std::move(c));
      return;
    }
    if (c->fresh) {
      c->fresh = false;
      --unseen_;
      set_nonblocking(c->fd);
      // Over the limit: the connection that has been sending (or idling)
      // the longest makes room, else the newcomer is refused. What has
      // arrived is read first, so that a client whose request is in the
      // socket is not taken for a slow one while arrivals pile up. Those
      // admitted after this one are not counted yet (each is, when taken):
      // counted, a burst of arrivals the poll thread has not reached would
      // have every newcomer in it refused with nothing to evict.
      if (open_ - unseen_ > limits_.max_connections) {
        read_waiting();
        if (!evict_one())
          return answer_and_close(*c, 503, "max_connections", busy_message(), false);
      }
      conns_.push_back(std::move(c));
      return;
    }
    // Handed back with what followed its request, which may be whole already.
    Connection& ref = *c;
    conns_.push_back(std::move(c));
    if (ref.phase == Phase::kHead) advance(ref, now);
  }

  void read_waiting() {
    std::vector<pollfd> fds;
    std::vector<Connection*> polled;
    for (auto& c : conns_)
      if (c && c->fd >= 0 && c->phase != Phase::kLinger) {
        fds.push_back(pollfd{c->fd, POLLIN, 0});
        polled.push_back(c.get());
      }
    if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return;
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents) on_readable(*polled[i], read_buffer_);
  }

  bool evict_one() {
    Connection* victim = nullptr;
    auto rank = [](const Connection& c) {  // lingering and idle ones go first
      return c.phase == Phase::kLinger ? 0 : c.phase == Phase::kIdle ? 1 : 2;
    };
    for (auto& c : conns_) {
      if (!c || c->fd < 0) continue;
      if (!victim || rank(*c) < rank(*victim) ||
          (rank(*c) == rank(*victim) && c->since < victim->since))
        victim = c.get();
    }
    if (!victim) return false;
    if (victim->phase == Phase::kLinger || victim->phase == Phase::kIdle) {
      close_now(*victim);
    } else {
      answer_and_close(*victim, 503, "evicted",
                       "this connection was closed for a newer one: the server has " +
                           std::to_string(limits_.max_connections) + " connections open (" +
                           option("max_connections") + ") and this request was the slowest "
                           "to arrive",
                       false);
    }
    return true;
  }

  void sweep(Clock::time_point now) {
    for (auto& c : conns_) {
      if (!c || c->fd < 0 || now < c->deadline) continue;
      switch (c->phase) {
        case Phase::kIdle:
        case Phase::kLinger: close_now(*c); break;
        case Phase::kHead:
          answer_and_close(*c, 408, "header_timeout",
                           "the request line and headers did not arrive within " +
                               option("header_timeout") + "=" +
                               seconds_text(limits_.header_timeout_s) + " s",
                           false);
          break;
        case Phase::kBody:
        case Phase::kChunked:
          answer_and_close(*c, 408, "body_timeout",
                           "the request body did not arrive within " + option("body_timeout") +
                               "=" + seconds_text(limits_.body_timeout_s) + " s",
                           false);
          break;
      }
    }
  }

  static std::string seconds_text(double s) {
    std::string text = std::to_string(s);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  }

  void on_readable(Connection& c, std::vector<char>& chunk) {
    if (c.fd < 0) return;
    size_t want = chunk.size();
    switch (c.phase) {
      case Phase::kIdle:
      case Phase::kHead: {
        // One byte past the limit tells a head that is too long.
        const size_t limit = static_cast<size_t>(limits_.max_header_bytes) + 1;
        want = std::min(want, limit - std::min(c.buf.size(), limit - 1));
        break;
      }
      case Phase::kBody: want = std::min(want, c.request_end - c.buf.size()); break;
      default: break;
    }
    const ssize_t n = ::recv(c.fd, chunk.data(), std::max<size_t>(want, 1), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) return close_now(c);  // the client left (or reset)
    const auto now = Clock::now();
    if (c.phase == Phase::kLinger) {
      c.drained += n;
      if (c.drained > kLingerBytes) close_now(c);
      return;
    }
    if (c.phase == Phase::kChunked && !reserve(c, n))
      return answer_and_close(c, 503, "max_buffered_bytes", buffered_message(), true);
    c.buf.append(chunk.data(), static_cast<size_t>(n));
    if (c.phase == Phase::kIdle) {
      c.phase = Phase::kHead;
      c.since = now;
      c.deadline = now + seconds(limits_.header_timeout_s);
    }
    advance(c, now);
  }

  std::string buffered_message() const {
    return "the server holds " + std::to_string(limits_.max_buffered_bytes) +
           " bytes of request bodies already (" + option("max_buffered_bytes") + "): retry later";
  }

  std::string too_large_message() const {
    return "the request body is larger than this server takes (" + option("max_request_bytes") +
           "=" + std::to_string(limits_.max_body_bytes) + "): split the request";
  }

  // Moves the connection's request on as far as its bytes allow.
  void advance(Connection& c, Clock::time_point now) {
    if (c.phase == Phase::kHead && !read_head(c, now)) return;
    if (c.fd < 0) return;
    if (c.phase == Phase::kBody && c.buf.size() < c.request_end) return;
    if (c.phase == Phase::kChunked && !read_chunks(c)) return;
    if (c.fd < 0) return;
    hand_over(c);
  }

  // True once the headers are in and the framing is known (phase kBody,
  // kChunked, or kHead with request_end set for a request without a body).
  bool read_head(Connection& c, Clock::time_point now) {
    FramingFault fault =
        find_head_end(c.buf, c.scan_at, c.head_end, static_cast<uint64_t>(limits_.max_header_bytes));
    if (fault != FramingFault::kNone) return refuse(c, fault);
    if (c.head_end == 0) return false;
    RequestHead head;
    fault = parse_head(std::string_view(c.buf.data(), c.head_end),
                       static_cast<uint64_t>(limits_.max_body_bytes), head);
    if (fault != FramingFault::kNone) return refuse(c, fault);
    if (head.length && *head.length > 0 && !reserve(c, static_cast<int64_t>(*head.length))) {
      answer_and_close(c, 503, "max_buffered_bytes", buffered_message(), true);
      return false;
    }
    // The gate answers Expect: 100-continue itself (the client may send
    // its body); httplib, seeing the header, would answer it again.
    for (auto it = head.expect_lines.rbegin(); it != head.expect_lines.rend(); ++it) {
      c.buf.erase(it->first, it->second);
      c.head_end -= it->second;
    }
    if (!head.expect_lines.empty() && head.has_body() && c.buf.size() == c.head_end) {
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      [[maybe_unused]] const ssize_t n =
          ::send(c.fd, kContinue, sizeof(kContinue) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (head.chunked) {
      c.phase = Phase::kChunked;
      c.chunks = ChunkedBody(c.head_end);
      // What already came after the headers is the body's.
      if (!reserve(c, static_cast<int64_t>(c.buf.size() - c.head_end))) {
        answer_and_close(c, 503, "max_buffered_bytes", buffered_message(), true);
        return false;
      }
    } else if (head.has_body()) {
      c.phase = Phase::kBody;
      c.request_end = c.head_end + *head.length;
    } else {
      c.request_end = c.head_end;
      return true;
    }
    c.since = now;
    c.deadline = now + seconds(limits_.body_timeout_s);
    return true;
  }

  // True once the chunked body is whole (request_end set).
  bool read_chunks(Connection& c) {
    const FramingFault fault =
        c.chunks.read(c.buf, static_cast<uint64_t>(limits_.max_body_bytes));
    if (fault != FramingFault::kNone) return refuse(c, fault);
    if (!c.chunks.done()) return false;
    c.request_end = c.chunks.end();
    return true;
  }

  // Answers a request whose framing is refused, and closes; false.
  bool refuse(Connection& c, FramingFault fault) {
    const int status = framing_status(fault);
    std::string reason = "bad_framing", message;
    switch (fault) {
      case FramingFault::kHeadTooLong:
        reason = "max_header_bytes";
        message = "the request line and headers are longer than this server takes (" +
                  option("max_header_bytes") + "=" + std::to_string(limits_.max_header_bytes) +
                  " bytes)";
        break;
      case FramingFault::kTooLarge:
        reason = "max_request_bytes";
        message = too_large_message();
        break;
      case FramingFault::kTwoLengths: message = "the request has two Content-Length headers"; break;
      case FramingFault::kLengthNotDecimal:
        message = "the request's Content-Length is not a decimal number";
        break;
      case FramingFault::kBadEncoding:
        message = "the only Transfer-Encoding this server takes is chunked, once";
        break;
      case FramingFault::kLengthAndChunked:
        message = "the request has both Content-Length and Transfer-Encoding";
        break;
      case FramingFault::kLongChunkLine:
        message = "a chunk-size line is longer than " + std::to_string(kMaxChunkLine) + " bytes";
        break;
      case FramingFault::kBadChunkSize: message = "a chunk size is not a hexadecimal number"; break;
      case FramingFault::kTrailers:
        message = "the chunked body has trailers, which this server does not take";
        break;
      case FramingFault::kBadChunkEnd: message = "a chunk's data does not end with CRLF"; break;
      case FramingFault::kNone: break;
    }
    answer_and_close(c, status, reason, message, true);
    return false;
  }

  // A whole request: to the workers, unless too many wait already.
  void hand_over(Connection& c) {
    auto owned = std::find_if(conns_.begin(), conns_.end(),
                              [&](const auto& p) { return p.get() == &c; });
    std::unique_lock<std::mutex> lock(mutex_);
    if (static_cast<int64_t>(work_.size()) >= limits_.max_waiting_requests) {
      lock.unlock();
      return answer_and_close(c, 503, "max_waiting_requests",
                              "the server has " + std::to_string(limits_.max_waiting_requests) +
                                  " requests waiting for a thread already (" +
                                  option("max_waiting_requests") + "): retry later",
                              true);
    }
    work_.push_back(std::move(*owned));
    lock.unlock();
    work_ready_.notify_one();
  }

  // ---- the workers ----

  void work_loop() {
    for (;;) {
      std::unique_ptr<Connection> c;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_ready_.wait(lock, [&] { return !work_.empty() || stopping_; });
        if (work_.empty()) return;
        c = std::move(work_.front());
        work_.pop_front();
      }
      BufferedStream stream(*c, seconds(limits_.write_timeout_s));
      bool closed = false;
      const bool keep_alive = limits_.keep_alive_timeout_s > 0;
      bool ok = false;
      try {
        ok = server_.handle(stream, !keep_alive || stopping_, closed);
      } catch (const std::exception& e) {
        spdlog::error("internal error answering a request: {}", e.what());
      }
      release(*c);
      if (stream.failed()) {
        close_now(*c);
        continue;
      }
      c->close_after = !ok || closed || !keep_alive || !stream.consumed_all();
      if (!c->close_after)
        c->next_request(Clock::now(), limits_.keep_alive_timeout_s, limits_.header_timeout_s);
      std::unique_lock<std::mutex> lock(mutex_);
      if (stopping_) {
        lock.unlock();
        close_now(*c);
        continue;
      }
      inbox_.push_back(std::move(c));
      lock.unlock();
      wake();
    }
  }

  GatedHttpServer& server_;
  const GateLimits limits_;
  const OptionSpelling spell_;
  const GateRefusal on_refusal_;

  std::mutex mutex_;
  bool running_ = false;
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Connection>> inbox_;  // new, or handed back by a worker
  std::deque<std::unique_ptr<Connection>> work_;  // whole requests waiting for a worker
  std::condition_variable work_ready_;
  std::condition_variable inbox_space_;
  int wake_fd_ = -1;
  std::thread poller_;
  std::vector<std::thread> workers_;

  std::vector<std::unique_ptr<Connection>> conns_;  // the poll thread's
  std::vector<char> read_buffer_ = std::vector<char>(65536);  // the poll thread's
  std::atomic<int64_t> open_{0};  // sockets open, wherever they are
  std::atomic<int64_t> unseen_{0};  // admitted, not yet taken by the poll thread
  std::atomic<int64_t> buffered_{0};  // bytes reserved for bodies
};

namespace {

// httplib's task queue, which runs each accepted socket's task at once: the
// task hands the socket to the gate.
class GateQueue : public httplib::TaskQueue {
 public:
  explicit GateQueue(std::function<void()> on_shutdown) : on_shutdown_(std::move(on_shutdown)) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { on_shutdown_(); }

 private:
  std::function<void()> on_shutdown_;
};

}  // namespace

GatedHttpServer::GatedHttpServer(const GateLimits& limits, OptionSpelling spell,
                                 GateRefusal on_refusal)
    : gate_(std::make_unique<Gate>(*this, limits, std::move(spell), std::move(on_refusal))) {
  new_task_queue = [this] {
    gate_->start();
    return new GateQueue([this] { gate_->stop(); });
  };
}

GatedHttpServer::~GatedHttpServer() { gate_->stop(); }

bool GatedHttpServer::process_and_close_socket(socket_t sock) {
  gate_->admit(sock);
  return true;
}

}  // namespace t2t
