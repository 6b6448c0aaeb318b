#include "t2t/metrics/references.h"

#include "t2t/core/error.h"

namespace t2t {

References::References(std::vector<std::vector<std::string>> streams) {
  if (streams.empty()) throw Error("no references given: a score needs at least one");
  const size_t lines = streams[0].size();
  for (size_t s = 1; s < streams.size(); ++s)
    if (streams[s].size() != lines)
      throw Error("reference " + std::to_string(s + 1) + " has " +
                  std::to_string(streams[s].size()) + " lines but reference 1 has " +
                  std::to_string(lines) + "; every reference translates the same sentences");
  segments_.resize(lines);
  for (size_t i = 0; i < lines; ++i) {
    segments_[i].reserve(streams.size());
    for (auto& stream : streams) segments_[i].push_back(std::move(stream[i]));
  }
  nrefs_ = static_cast<int>(streams.size());
}

References References::with_gaps(
    const std::vector<std::vector<std::optional<std::string>>>& streams) {
  if (streams.empty()) throw Error("no references given: a score needs at least one");
  const size_t lines = streams[0].size();
  References r;
  r.segments_.resize(lines);
  bool variable = false;
  for (size_t s = 0; s < streams.size(); ++s) {
    if (streams[s].size() != lines)
      throw Error("reference " + std::to_string(s + 1) + " has " +
                  std::to_string(streams[s].size()) + " lines but reference 1 has " +
                  std::to_string(lines) + "; every reference translates the same sentences");
  }
  for (size_t i = 0; i < lines; ++i) {
    for (const auto& stream : streams)
      if (stream[i]) r.segments_[i].push_back(*stream[i]);
    if (r.segments_[i].empty())
      throw Error("sentence " + std::to_string(i + 1) +
                  " has no reference in any stream (all None): give at least one");
    variable = variable || r.segments_[i].size() != streams.size();
  }
  r.nrefs_ = variable ? -1 : static_cast<int>(streams.size());
  return r;
}

References References::one_segment(std::vector<std::string> references) {
  if (references.empty()) throw Error("no references given: a score needs at least one");
  References r;
  r.nrefs_ = static_cast<int>(references.size());
  r.segments_.push_back(std::move(references));
  return r;
}

std::string References::nrefs() const {
  return nrefs_ < 0 ? "var" : std::to_string(nrefs_);
}

void References::check_hypotheses(size_t hypotheses, const std::string& metric) const {
  if (hypotheses != segments_.size())
    throw Error(metric + " needs one hypothesis per reference line: got " +
                std::to_string(hypotheses) + " hypotheses and " +
                std::to_string(segments_.size()) + " reference lines");
}

}  // namespace t2t
