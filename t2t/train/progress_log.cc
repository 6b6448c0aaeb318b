#include "t2t/train/progress_log.h"

#include <algorithm>
#include <string>

#include "t2t/core/logging.h"
#include "t2t/io/event_writer.h"
#include "t2t/train/step_stats.h"

namespace t2t {

void ProgressLog::add(const StepReport& r) {
  loss_ += r.loss_sum;
  weight_ += r.tokens;
  tokens_ += r.input_tokens + r.tokens;
  alignment_cost_ += r.alignment_cost;
  aligned_ += r.aligned_positions;
}

void ProgressLog::log(int64_t step, int64_t train_steps, double lr, int world_size,
                      EventWriter* events) {
  const double secs = std::max(since_log_.seconds(), 1e-9);
  const double done = step - first_step_;
  const double left = std::max<int64_t>(0, train_steps - step);
  const double eta = done > 0 ? since_start_.seconds() / done * left : 0;
  const double mean = weight_ > 0 ? loss_ / weight_ : 0;
  const double steps_per_sec = (step - last_step_) / secs;
  // Guided alignment's cost per aligned target token, beside the loss.
  const std::string alignment =
      aligned_ > 0 ? fmt::format(", alignment cost {:.4f}", alignment_cost_ / aligned_) : "";
  spdlog::info("step {}: loss {:.4f}{}, lr {:.3g}, {:.0f} tokens/s{}, {:.2f} steps/s, elapsed "
               "{:.0f} s, ETA {:.0f} s",
               step, mean, alignment, lr, tokens_ / secs, world_size > 1 ? " (all workers)" : "",
               steps_per_sec, since_start_.seconds(), eta);
  if (events) {
    events->add_scalars(step, {{"loss", mean}, {"training/learning_rate", lr},
                               {"tokens_per_sec", tokens_ / secs},
                               {"global_step/sec", steps_per_sec}});
    events->flush();
  }
  loss_ = weight_ = tokens_ = alignment_cost_ = aligned_ = 0;
  last_step_ = step;
  since_log_.restart();
}

}  // namespace t2t
