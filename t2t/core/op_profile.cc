#include "t2t/core/op_profile.h"

#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "t2t/core/error.h"

namespace t2t {
namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
};

// What the end callback needs of its start: when, and how much of the time
// since went to ops called from it (added by those ops as they end).
struct Entry : at::ObserverContext {
  Clock::time_point start;
  int64_t child_ns = 0;
  Entry* parent = nullptr;
};

// The innermost op running on this thread: RecordFunction scopes nest
// within a thread, so a parent pointer is all the stack there is.
thread_local Entry* innermost = nullptr;

}  // namespace

struct OpProfile::State {
  at::CallbackHandle handle = 0;
  mutable std::mutex mutex;
  std::unordered_map<std::string, Totals> totals;
};

namespace {

// The callbacks are plain function pointers: they find the live profile
// here.
std::atomic<OpProfile::State*> active{nullptr};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
  auto entry = std::make_unique<Entry>();
  entry->parent = innermost;
  innermost = entry.get();
  entry->start = Clock::now();
  return entry;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  const auto end = Clock::now();
  auto* entry = static_cast<Entry*>(context);
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - entry->start).count();
  innermost = entry->parent;
  if (entry->parent) entry->parent->child_ns += ns;
  OpProfile::State* state = active.load(std::memory_order_acquire);
  if (!state) return;
  const std::lock_guard<std::mutex> lock(state->mutex);
  Totals& totals = state->totals[fn.name()];
  ++totals.calls;
  totals.total_ns += ns;
  totals.self_ns += std::max<int64_t>(0, ns - entry->child_ns);
}

}  // namespace

OpProfile::OpProfile() : state_(std::make_unique<State>()) {
  State* expected = nullptr;
  if (!active.compare_exchange_strong(expected, state_.get()))
    throw Error("an operator profile is already being recorded in this process");
  state_->handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_start, on_end)
          .needsInputs(false)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
}

OpProfile::~OpProfile() {
  at::removeCallback(state_->handle);
  active.store(nullptr, std::memory_order_release);
}

std::vector<OpTime> OpProfile::times() const {
  std::vector<OpTime> times;
  {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    for (const auto& [name, t] : state_->totals)
      times.push_back({name, t.calls, t.total_ns * 1e-9, t.self_ns * 1e-9});
  }
  std::sort(times.begin(), times.end(), [](const OpTime& a, const OpTime& b) {
    return a.self_seconds != b.self_seconds ? a.self_seconds > b.self_seconds : a.name < b.name;
  });
  return times;
}

std::string OpProfile::report(double wall_seconds, size_t top) const {
  const std::vector<OpTime> times = this->times();
  const double wall = wall_seconds > 0 ? wall_seconds : 1;
  std::string out = fmt::format(
      "{:<44} {:>9} {:>10} {:>7} {:>10} {:>9}\n", "operator or scope (by self time)", "calls",
      "self s", "self %", "total s", "us/call");
  double rest = 0;
  int64_t rest_calls = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const OpTime& t = times[i];
    if (i >= top) {
      rest += t.self_seconds;
      rest_calls += t.calls;
      continue;
    }
    out += fmt::format("{:<44} {:>9} {:>10.3f} {:>6.1f}% {:>10.3f} {:>9.1f}\n", t.name, t.calls,
                       t.self_seconds, 100 * t.self_seconds / wall, t.total_seconds,
                       1e6 * t.total_seconds / std::max<int64_t>(1, t.calls));
  }
  if (times.size() > top)
    out += fmt::format("{:<44} {:>9} {:>10.3f} {:>6.1f}%\n",
                       fmt::format("({} others)", times.size() - top), rest_calls, rest,
                       100 * rest / wall);
  out += fmt::format("shares are of {:.3f} s of wall time; with several threads they add up to "
                     "more than 100%\n", wall_seconds);
  return out;
}

}  // namespace t2t
