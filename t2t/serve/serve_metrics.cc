#include "t2t/serve/serve_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace t2t {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();  // le: <=
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::write(std::string& out, const std::string& name) const {
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, count_);
  out += fmt::format("{}_sum {}\n{}_count {}\n", name, sum_, name, count_);
}

ServeMetrics::ServeMetrics(std::chrono::seconds rate_window)
    : window_(rate_window),
      latency_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      batch_size_({1, 2, 4, 8, 16, 32, 64, 128, 256}) {}

void ServeMetrics::request_done(const std::string& path, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{path, status}];
}

void ServeMetrics::translate_latency(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  latency_.observe(seconds);
}

void ServeMetrics::batch_done(int64_t sentences, int64_t output_tokens) {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  batch_size_.observe(static_cast<double>(sentences));
  sentences_ += sentences;
  output_tokens_ += output_tokens;
  recent_.emplace_back(now, sentences, output_tokens);
  drop_old_locked(now);
}

void ServeMetrics::reload_done(bool ok) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++(ok ? reloads_ok_ : reloads_failed_);
}

void ServeMetrics::connection_refused(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++refused_[reason];
}

void ServeMetrics::drop_old_locked(Clock::time_point now) const {
  while (!recent_.empty() && now - std::get<0>(recent_.front()) > window_) recent_.pop_front();
}

std::string ServeMetrics::prometheus_text(int64_t queue_depth, int64_t in_flight_requests,
                                          int64_t model_step) const {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  drop_old_locked(now);
  // Over the window, or over the uptime while that is shorter.
  const double span = std::max(
      1e-3, std::min(std::chrono::duration<double>(window_).count(),
                     std::chrono::duration<double>(now - started_).count()));
  int64_t recent_sentences = 0, recent_tokens = 0;
  for (const auto& [when, sentences, tokens] : recent_) {
    recent_sentences += sentences;
    recent_tokens += tokens;
  }
  std::string out;
  out += "# HELP t2t_http_requests_total HTTP requests answered, by path and status.\n"
         "# TYPE t2t_http_requests_total counter\n";
  for (const auto& [key, count] : requests_)
    out += fmt::format("t2t_http_requests_total{{path=\"{}\",code=\"{}\"}} {}\n", key.first,
                       key.second, count);
  out += "# HELP t2t_http_connections_refused_total Connections dropped or refused before "
         "their request was routed (too slow, too large, too many), by reason.\n"
         "# TYPE t2t_http_connections_refused_total counter\n";
  for (const auto& [reason, count] : refused_)
    out += fmt::format("t2t_http_connections_refused_total{{reason=\"{}\"}} {}\n", reason, count);
  out += "# HELP t2t_translate_latency_seconds Time from receiving a translate request to "
         "answering it with its translations.\n# TYPE t2t_translate_latency_seconds histogram\n";
  latency_.write(out, "t2t_translate_latency_seconds");
  out += "# HELP t2t_batch_sentences Sentences per decoded batch.\n"
         "# TYPE t2t_batch_sentences histogram\n";
  batch_size_.write(out, "t2t_batch_sentences");
  out += fmt::format(
      "# HELP t2t_queue_sentences Sentences waiting to be decoded.\n"
      "# TYPE t2t_queue_sentences gauge\nt2t_queue_sentences {}\n"
      "# HELP t2t_requests_in_flight Translate requests received and not yet answered.\n"
      "# TYPE t2t_requests_in_flight gauge\nt2t_requests_in_flight {}\n"
      "# HELP t2t_translated_sentences_total Sentences decoded.\n"
      "# TYPE t2t_translated_sentences_total counter\nt2t_translated_sentences_total {}\n"
      "# HELP t2t_output_tokens_total Output tokens of the best hypotheses, EOS included.\n"
      "# TYPE t2t_output_tokens_total counter\nt2t_output_tokens_total {}\n"
      "# HELP t2t_sentences_per_second Sentences decoded per second over the last {} s.\n"
      "# TYPE t2t_sentences_per_second gauge\nt2t_sentences_per_second {:.3f}\n"
      "# HELP t2t_output_tokens_per_second Output tokens per second over the last {} s.\n"
      "# TYPE t2t_output_tokens_per_second gauge\nt2t_output_tokens_per_second {:.3f}\n"
      "# HELP t2t_model_step Training step of the checkpoint being served (-1: none yet).\n"
      "# TYPE t2t_model_step gauge\nt2t_model_step {}\n"
      "# HELP t2t_model_reloads_total Checkpoint reloads, by result.\n"
      "# TYPE t2t_model_reloads_total counter\n"
      "t2t_model_reloads_total{{result=\"ok\"}} {}\nt2t_model_reloads_total{{result=\"failed\"}} {}\n",
      queue_depth, in_flight_requests, sentences_, output_tokens_, window_.count(),
      recent_sentences / span, window_.count(), recent_tokens / span, model_step, reloads_ok_,
      reloads_failed_);
  return out;
}

}  // namespace t2t
