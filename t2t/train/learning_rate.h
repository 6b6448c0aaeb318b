// T2T's learning-rate schedules (utils/learning_rate.py): the hparam
// learning_rate_schedule is a product of named factors, e.g.
// "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

class HParams;

// The learning rate for the update at T2T's global_step `step` (0 for the
// first). With optimizer_multistep_accumulate_steps n > 0 the step counts
// micro-batches and is divided by n, as T2T does.
//
// Factors (split at '*', blanks ignored):
//   constant                learning_rate_constant
//   linear_warmup           min(1, s / warmup)
//   linear_decay            clamp((train_steps - s) / decay_steps, 0, 1)
//   cosdecay                1 while s <= warmup, then 0.5 (1 + cos(pi s / decay_steps))
//   single_cycle_cos_decay  cosine from 1 at warmup to 0 at train_steps
//   multi_cycle_cos_decay   cosine over decay_steps, restarting, from warmup on
//   rsqrt_decay             max(s, warmup)^-0.5
//   rsqrt_normalized_decay  sqrt(warmup) * max(s, warmup)^-0.5
//   exp_decay               decay_rate ^ max(0, (s - warmup) / decay_steps)
//                           (floored with learning_rate_decay_staircase)
//   rsqrt_hidden_size       hidden_size^-0.5
//   legacy                  learning_rate * 0.002 for Adam-family optimizers *
//                           learning_rate_decay_scheme: "noam" is
//                           5000 * hidden_size^-0.5 * min((s+1) warmup^-1.5, (s+1)^-0.5);
//                           the others (none, exp, cosine, cyclelinear10x,
//                           sqrt) follow an exponential warmup from 1% over
//                           warmup steps.
// where warmup, decay_steps and decay_rate are the learning_rate_* hparams.
// Throws t2t::Error naming an unknown factor, or a hparam a factor lacks.
double learning_rate(const HParams& hp, int64_t step);

// The factor names learning_rate() knows.
const std::vector<std::string>& learning_rate_factor_names();

// Whether hp's schedule has a factor that reads the hparam train_steps
// (linear_decay, single_cycle_cos_decay).
bool schedule_reads_train_steps(const HParams& hp);

// Checks hp's schedule, so a bad name stops a run before it starts.
void check_learning_rate_schedule(const HParams& hp);

}  // namespace t2t
