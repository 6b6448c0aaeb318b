#include "t2t/train/early_stopping.h"

#include <cmath>
#include <cstdio>

namespace t2t {

namespace {

// Index of the reference evaluation: the last one at least `steps` before
// the latest; -1 when there is none.
int64_t reference_index(const std::vector<std::pair<int64_t, double>>& history, int64_t steps) {
  if (history.size() < 2 || steps <= 0) return -1;
  const int64_t latest = history.back().first;
  int64_t found = -1;
  for (size_t i = 0; i < history.size(); ++i)
    if (history[i].first <= latest - steps) found = static_cast<int64_t>(i);
  return found;
}

// How much `value` improves on `reference` in the metric's good direction.
double gain(double reference, double value, bool minimize) {
  return minimize ? reference - value : value - reference;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

bool has_plateaued(const std::vector<std::pair<int64_t, double>>& history, int64_t steps,
                   double delta, bool minimize) {
  const int64_t ref = reference_index(history, steps);
  if (ref < 0) return false;
  const double reference = history[static_cast<size_t>(ref)].second;
  for (size_t i = static_cast<size_t>(ref); i < history.size(); ++i)
    // A NaN gain compares false: an evaluation that went NaN is no progress.
    if (gain(reference, history[i].second, minimize) >= delta) return false;
  return true;
}

std::optional<std::string> early_stopping_reason(
    const std::vector<std::pair<int64_t, double>>& history, const EarlyStoppingOptions& options) {
  if (options.steps <= 0 ||
      !has_plateaued(history, options.steps, options.delta, options.minimize))
    return std::nullopt;
  const auto& reference = history[static_cast<size_t>(reference_index(history, options.steps))];
  double best = reference.second;
  for (const auto& [step, value] : history)
    if (step > reference.first && gain(best, value, options.minimize) > 0) best = value;
  return options.metric + " has not " + (options.minimize ? "decreased" : "increased") + " by " +
         number(options.delta) + " or more in " + std::to_string(options.steps) +
         " steps: " + number(reference.second) + " at step " + std::to_string(reference.first) +
         ", at best " + number(best) + " since (latest " + number(history.back().second) +
         " at step " + std::to_string(history.back().first) + ")";
}

}  // namespace t2t
