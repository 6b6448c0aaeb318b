#include "t2t/train/step_reporter.h"

#include <torch/torch.h>

#include <string>

#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/distributed/communicator.h"
#include "t2t/train/step_stats.h"
#include "t2t/train/stop_request.h"
#include "t2t/train/train_step.h"

namespace t2t {

StepReporter::StepReporter(const TrainOptions& options, int world_size,
                           Communicator* communicator, int64_t step, EventWriter* events)
    : options_(options),
      world_size_(world_size),
      communicator_(communicator),
      events_(events),
      progress_(step) {}

// Non-finite steps were skipped on the device; too many in a row stop the
// run with the last good checkpoint named.
void StepReporter::check_nonfinite(const StepReport& r, int64_t step) {
  if (r.overflow > 0)
    spdlog::debug("by step {}: {} fp16 gradient overflow(s), their updates skipped", step,
                  r.overflow);
  if (r.nonfinite == 0) return;
  nonfinite_total_ += r.nonfinite;
  spdlog::warn("by step {}: {} step(s) with a non-finite loss or gradient, their updates "
               "skipped ({} in a row now, {} in all)",
               step, r.nonfinite, r.nonfinite_run, nonfinite_total_);
  if (r.max_nonfinite_run < options_.max_nonfinite_steps) return;
  const std::string last = latest_checkpoint(options_.output_dir);
  throw OptionError("max_nonfinite_steps",
                    "training stopped at step " + std::to_string(step) + ": " +
                        std::to_string(r.max_nonfinite_run) +
                        " steps in a row gave a non-finite loss or gradient "
                        "({max_nonfinite_steps}=" +
                        std::to_string(options_.max_nonfinite_steps) +
                        "); their updates were skipped. " +
                        (last.empty() ? std::string("No checkpoint was written yet.")
                                      : "The last good checkpoint is " + last + ".") +
                        " Lower the learning rate (learning_rate_constant / learning_rate), "
                        "raise learning_rate_warmup_steps, or set clip_grad_norm.");
}

StepReporter::PendingReport StepReporter::start_report(TrainStep& train_step, int64_t step,
                                                       double lr, bool log, bool save_time) {
  PendingReport p;
  p.step = step;
  p.lr = lr;
  p.log = log;
  p.flags[0] = save_time;
  p.flags[1] = stop_requested();
  if (!communicator_) {
    train_step.stats().snapshot();
    return p;
  }
  at::Tensor flags = torch::tensor({p.flags[0] ? 1.0 : 0.0, p.flags[1] ? 1.0 : 0.0},
                                   torch::kFloat64)
                         .to(communicator_->device());
  communicator_->all_reduce_sum_async(flags)->wait();
  train_step.stats().snapshot({flags.select(0, 0), flags.select(0, 1)});
  return p;
}

std::array<bool, 2> StepReporter::finish_report(TrainStep& train_step, const PendingReport& p) {
  const StepReport r = train_step.stats().take();
  progress_.add(r);
  check_nonfinite(r, p.step);
  if (p.log) progress_.log(p.step, options_.train_steps, p.lr, world_size_, events_);
  if (r.extra.size() == 2) return {r.extra[0] > 0, r.extra[1] > 0};
  return {p.flags[0], p.flags[1]};
}

}  // namespace t2t
