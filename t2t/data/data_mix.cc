#include "t2t/data/data_mix.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "t2t/core/error.h"

namespace t2t {

std::string training_part_split(const std::string& part) { return "train-" + part; }

void check_training_parts(const std::vector<TrainingPart>& parts, const std::string& where) {
  std::set<std::string> names;
  size_t with_epochs = 0;
  for (const TrainingPart& p : parts) {
    const std::string what = where + ": training part '" + p.name + "'";
    if (p.name.empty() || p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
                              std::string::npos)
      throw Error(what + ": a part's name must be lower-case letters, digits and underscores");
    if (!names.insert(p.name).second) throw Error(what + " is named twice");
    if (p.epochs != 0) {
      ++with_epochs;
      if (!std::isfinite(p.epochs) || p.epochs < 0)
        throw Error(what + ": epochs must be a number > 0, not " + std::to_string(p.epochs));
    } else if (!std::isfinite(p.weight) || p.weight <= 0) {
      throw Error(what + ": weight must be a number > 0, not " + std::to_string(p.weight));
    }
    if (p.tag.find_first_of(" \t\r\n") != std::string::npos)
      throw Error(what + ": the tag '" + p.tag + "' must be one word, without spaces");
  }
  if (with_epochs != 0 && with_epochs != parts.size())
    throw Error(where + ": give every training part epochs, or none (then each has a weight)");
}

std::string describe_mix(const DataMix& mix) {
  std::string out;
  for (const MixPart& p : mix) {
    char weight[32];
    std::snprintf(weight, sizeof weight, "%g", p.weight);
    out += (out.empty() ? "" : ", ") + p.name + " " + weight;
  }
  return out;
}

MixSchedule::MixSchedule(std::vector<double> weights)
    : weights_(std::move(weights)), taken_(weights_.size(), 0) {
  if (weights_.empty()) throw Error("a data mix needs at least one part");
  for (double w : weights_)
    if (!std::isfinite(w) || w <= 0)
      throw Error("a data mix's weights must be > 0, not " + std::to_string(w));
}

size_t MixSchedule::next() const {
  double total = 0;
  int64_t drawn = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    total += weights_[i];
    drawn += taken_[i];
  }
  const double n = static_cast<double>(drawn + 1);
  size_t best = 0;
  double behind = n * weights_[0] / total - static_cast<double>(taken_[0]);
  for (size_t i = 1; i < weights_.size(); ++i) {
    const double b = n * weights_[i] / total - static_cast<double>(taken_[i]);
    if (b > behind) {
      behind = b;
      best = i;
    }
  }
  return best;
}

void MixSchedule::restore(const std::vector<int64_t>& taken) {
  if (taken.size() != taken_.size())
    throw Error("reader state does not fit this reader: it counts examples of " +
                std::to_string(taken.size()) + " parts, the mix has " +
                std::to_string(taken_.size()));
  for (int64_t n : taken)
    if (n < 0) throw Error("reader state does not fit this reader: a part's count is negative");
  taken_ = taken;
}

}  // namespace t2t
