// What GET /metrics reports, in Prometheus' text format (version 0.0.4).
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

// Cumulative buckets as Prometheus expects them.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // "<name>_bucket{le=...} n" lines, then _sum and _count.
  void write(std::string& out, const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0.0;
  int64_t count_ = 0;
};

class ServeMetrics {
 public:
  // Rates are averaged over this window.
  explicit ServeMetrics(std::chrono::seconds rate_window = std::chrono::seconds(10));

  void request_done(const std::string& path, int status);
  void translate_latency(double seconds);
  void batch_done(int64_t sentences, int64_t output_tokens);
  void reload_done(bool ok);
  // A connection the server dropped or refused before routing its request
  // (connection_gate.h), by reason.
  void connection_refused(const std::string& reason);

  // `model_step` -1: none loaded yet.
  std::string prometheus_text(int64_t queue_depth, int64_t in_flight_requests,
                              int64_t model_step) const;

 private:
  using Clock = std::chrono::steady_clock;
  void drop_old_locked(Clock::time_point now) const;

  std::chrono::seconds window_;
  Clock::time_point started_ = Clock::now();
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  Histogram latency_;
  Histogram batch_size_;
  int64_t sentences_ = 0, output_tokens_ = 0;
  // (time, sentences, tokens) per batch within the window.
  mutable std::deque<std::tuple<Clock::time_point, int64_t, int64_t>> recent_;
  int64_t reloads_ok_ = 0, reloads_failed_ = 0;
  std::map<std::string, int64_t> refused_;
};

}  // namespace t2t
