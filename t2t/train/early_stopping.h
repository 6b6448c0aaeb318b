// T2T's early stopping (metrics_hook.has_metric_plateaued).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace t2t {

struct EarlyStoppingOptions {
  int64_t steps = 0;  // 0: off
  std::string metric = "loss";
  double delta = 0.1;
  bool minimize = true;
};

// The rule: take the last evaluation made at least `steps` steps before the
// latest one as the reference; the metric has plateaued when no evaluation
// since (the latest included) improved on the reference by `delta` or more.
// False with fewer than two evaluations or none old enough. `history` is
// (step, value) in step order.
bool has_plateaued(const std::vector<std::pair<int64_t, double>>& history, int64_t steps,
                   double delta, bool minimize);

// Why training should stop now, for the log; nullopt while it should go on
// or when early stopping is off.
std::optional<std::string> early_stopping_reason(
    const std::vector<std::pair<int64_t, double>>& history, const EarlyStoppingOptions& options);

}  // namespace t2t
