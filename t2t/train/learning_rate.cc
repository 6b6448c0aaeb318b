#include "t2t/train/learning_rate.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"

namespace t2t {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<std::string> split_factors(const std::string& schedule) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = schedule.find('*', start);
    std::string name = schedule.substr(start, end == std::string::npos ? end : end - start);
    const size_t b = name.find_first_not_of(" \t");
    const size_t e = name.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(name.substr(b, e - b + 1));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

const std::vector<std::string>& legacy_decay_schemes() {
  static const std::vector<std::string> names = {"noam", "none", "exp", "cosine",
                                                 "cyclelinear10x", "sqrt"};
  return names;
}

// The factors that read the hparam train_steps.
bool reads_train_steps(const std::string& factor) {
  return factor == "linear_decay" || factor == "single_cycle_cos_decay";
}

int64_t train_steps(const HParams& hp, const std::string& factor) {
  if (!hp.has("train_steps"))
    throw OptionError("hparams", "learning rate factor '" + factor +
                                     "' needs the hparam train_steps (add it with {hparams} or "
                                     "the hparams file)");
  return hp.get_int("train_steps");
}

double warmup_steps(const HParams& hp) { return hp.get_float("learning_rate_warmup_steps"); }

// The "legacy" factor: utils/learning_rate.py's legacy_learning_rate_schedule.
double legacy(const HParams& hp, double step) {
  const double warmup = warmup_steps(hp);
  const std::string& scheme = hp.get_string("learning_rate_decay_scheme");
  double ret;
  if (scheme == "noam") {
    // step + 1 so that the first update does not get a zero rate.
    ret = 5000.0 * std::pow(hp.get_float("hidden_size"), -0.5) *
          std::min((step + 1.0) * std::pow(warmup, -1.5), std::pow(step + 1.0, -0.5));
  } else if (warmup > 0 && step < warmup) {
    // Exponential warmup from 1% of the rate to all of it.
    ret = std::pow(0.01, (warmup - step) / warmup);
  } else if (scheme.empty() || scheme == "none") {
    ret = 1.0;
  } else if (scheme == "exp") {
    double p = (step - warmup) / hp.get_float("learning_rate_decay_steps");
    if (hp.get_bool("learning_rate_decay_staircase")) p = std::floor(p);
    ret = std::pow(hp.get_float("learning_rate_decay_rate"), p);
  } else if (scheme == "cosine") {
    const double cycle = hp.get_float("learning_rate_cosine_cycle_steps");
    double position = std::fmod(step, 2.0 * cycle);
    position = cycle - std::abs(cycle - position);
    ret = 0.5 * (1.0 + std::cos(kPi * position / cycle));
  } else if (scheme == "cyclelinear10x") {
    // Up and down linearly between 0.3 and 3.3 every warmup steps.
    const double cycle = warmup;
    const double position = (std::fmod(step, 2.0 * cycle) - cycle) / cycle;
    ret = (1.0 - std::abs(position) + 0.1) * 3.0;
  } else if (scheme == "sqrt") {
    ret = 500.0 / std::sqrt(std::max(step - warmup, 1.0));
  } else if (scheme == "piecewise") {
    throw Error("learning_rate_decay_scheme 'piecewise' is not supported: its multiples are a "
                "list of floats, which hparams cannot hold; use the factored schedule instead");
  } else {
    throw Error("unknown learning_rate_decay_scheme '" + scheme + "' for the legacy schedule; " +
                "known: " + join(legacy_decay_schemes()));
  }
  // The base rates of T2T's old hparams sets were tuned for SGD-sized
  // learning_rate values; Adam gets them scaled down by 500.
  std::string optimizer = hp.get_string("optimizer");
  std::transform(optimizer.begin(), optimizer.end(), optimizer.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const double correction = optimizer.find("adam") != std::string::npos ? 0.002 : 1.0;
  return ret * correction * hp.get_float("learning_rate");
}

double factor(const std::string& name, const HParams& hp, double step) {
  if (name == "constant") return hp.get_float("learning_rate_constant");
  if (name == "linear_warmup") {
    const double warmup = warmup_steps(hp);
    return warmup > 0 ? std::min(1.0, step / warmup) : 1.0;
  }
  if (name == "linear_decay") {
    const double left = (static_cast<double>(train_steps(hp, name)) - step) /
                        hp.get_float("learning_rate_decay_steps");
    return std::min(1.0, std::max(0.0, left));
  }
  if (name == "cosdecay") {
    if (step <= warmup_steps(hp)) return 1.0;
    return 0.5 * (1.0 + std::cos(kPi * step / hp.get_float("learning_rate_decay_steps")));
  }
  if (name == "single_cycle_cos_decay") {
    const double warmup = warmup_steps(hp);
    const double total = static_cast<double>(train_steps(hp, name));
    if (total <= warmup)
      throw Error("learning rate factor single_cycle_cos_decay needs train_steps (" +
                  std::to_string(static_cast<int64_t>(total)) +
                  ") above learning_rate_warmup_steps (" +
                  std::to_string(static_cast<int64_t>(warmup)) + ")");
    return std::cos((std::max(step, warmup) - warmup) * kPi / (total - warmup)) / 2.0 + 0.5;
  }
  if (name == "multi_cycle_cos_decay") {
    const double warmup = warmup_steps(hp);
    return std::cos((std::max(step, warmup) - warmup) * kPi /
                    hp.get_float("learning_rate_decay_steps")) /
               2.0 +
           0.5;
  }
  if (name == "rsqrt_decay") {
    // At least 1: T2T would divide by zero at step 0 with no warmup.
    return 1.0 / std::sqrt(std::max({step, warmup_steps(hp), 1.0}));
  }
  if (name == "rsqrt_normalized_decay") {
    const double warmup = warmup_steps(hp);
    return std::sqrt(warmup) / std::sqrt(std::max({step, warmup, 1.0}));
  }
  if (name == "exp_decay") {
    double p = std::max(0.0, (step - warmup_steps(hp)) / hp.get_float("learning_rate_decay_steps"));
    if (hp.get_bool("learning_rate_decay_staircase")) p = std::floor(p);
    return std::pow(hp.get_float("learning_rate_decay_rate"), p);
  }
  if (name == "rsqrt_hidden_size") return std::pow(hp.get_float("hidden_size"), -0.5);
  if (name == "legacy") return legacy(hp, step);
  throw Error("unknown learning rate factor '" + name + "' in learning_rate_schedule '" +
              hp.get_string("learning_rate_schedule") +
              "'; known: " + join(learning_rate_factor_names()));
}

}  // namespace

const std::vector<std::string>& learning_rate_factor_names() {
  static const std::vector<std::string> names = {
      "constant",     "linear_warmup",          "linear_decay",          "cosdecay",
      "single_cycle_cos_decay", "multi_cycle_cos_decay", "rsqrt_decay",
      "rsqrt_normalized_decay", "exp_decay",     "rsqrt_hidden_size",     "legacy"};
  return names;
}

bool schedule_reads_train_steps(const HParams& hp) {
  for (const std::string& name : split_factors(hp.get_string("learning_rate_schedule")))
    if (reads_train_steps(name)) return true;
  return false;
}

void check_learning_rate_schedule(const HParams& hp) {
  const std::string& schedule = hp.get_string("learning_rate_schedule");
  const auto& known = learning_rate_factor_names();
  for (const std::string& name : split_factors(schedule)) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw Error("unknown learning rate factor '" + name + "' in learning_rate_schedule '" +
                  schedule + "'; known: " + join(known));
    if (name == "legacy") {
      const std::string& scheme = hp.get_string("learning_rate_decay_scheme");
      const auto& schemes = legacy_decay_schemes();
      if (!scheme.empty() && std::find(schemes.begin(), schemes.end(), scheme) == schemes.end())
        throw Error("unknown learning_rate_decay_scheme '" + scheme +
                    "' for the legacy schedule; known: " + join(schemes));
    }
    if (reads_train_steps(name)) train_steps(hp, name);
  }
  learning_rate(hp, 0);  // what the factors refuse (e.g. train_steps within the warm-up)
}

double learning_rate(const HParams& hp, int64_t step) {
  double s = static_cast<double>(step);
  const int64_t accumulate = hp.has("optimizer_multistep_accumulate_steps")
                                 ? hp.get_int("optimizer_multistep_accumulate_steps")
                                 : 0;
  if (accumulate > 0) s /= static_cast<double>(accumulate);
  double rate = 1.0;
  for (const std::string& name : split_factors(hp.get_string("learning_rate_schedule")))
    rate *= factor(name, hp, s);
  return rate;
}

}  // namespace t2t
