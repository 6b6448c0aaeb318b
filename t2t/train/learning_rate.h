// T2T's learning-rate schedules (utils/learning_rate.py). The hparam
// learning_rate_schedule is a product of named factors, e.g.
// "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size" (transformer_base:
// 2.0 * min(1, s/w) * max(s, w)^-0.5 * d^-0.5) or "legacy" (the older
// learning_rate * learning_rate_decay_scheme form, "noam" for
// transformer_base_v1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

class HParams;

// The learning rate for the update made at `step`, where step is T2T's
// global_step: the number of steps already taken, 0 for the first update.
// With optimizer_multistep_accumulate_steps n > 0 (gradient accumulation)
// the global step advances once per micro-batch, and is divided by n here
// as T2T does, so the schedule runs in updates.
//
// Factors (names are split at '*', blanks ignored):
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
// where warmup = learning_rate_warmup_steps, decay_steps =
// learning_rate_decay_steps, decay_rate = learning_rate_decay_rate. The
// factors that need train_steps read it from the hparams.
// Throws t2t::Error naming the factor (and listing the known ones) for an
// unknown name, or naming the hparam a factor needs and lacks.
double learning_rate(const HParams& hp, int64_t step);

// The factor names learning_rate() knows.
const std::vector<std::string>& learning_rate_factor_names();

// Checks every factor of hp's schedule (and the legacy decay scheme) without
// computing anything, so that a bad name stops a run before it starts.
void check_learning_rate_schedule(const HParams& hp);

}  // namespace t2t
