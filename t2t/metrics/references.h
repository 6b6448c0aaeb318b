// The references a corpus score compares with, as sacreBLEU takes them:
// one or more reference streams, each a translation of the whole test set
// line for line. A segment may lack one stream's line (a variable number
// of references, sacreBLEU's "nrefs:var"), never all of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace t2t {

class References {
 public:
  // Each stream parallel to the hypotheses. Throws t2t::Error when there is
  // no stream or the streams differ in length.
  explicit References(std::vector<std::vector<std::string>> streams);
  // Streams whose missing lines are nullopt (Python's None): a segment
  // keeps the lines it has. Throws t2t::Error when a segment has none.
  static References with_gaps(const std::vector<std::vector<std::optional<std::string>>>& streams);
  // One segment's references, for a sentence-level score.
  static References one_segment(std::vector<std::string> references);

  size_t segments() const { return segments_.size(); }
  const std::vector<std::string>& segment(size_t i) const { return segments_[i]; }
  // The count in the signature: "1", "2", ... or "var".
  std::string nrefs() const;
  // Throws t2t::Error unless there are `hypotheses` segments; `metric`
  // names the score in the message.
  void check_hypotheses(size_t hypotheses, const std::string& metric) const;

 private:
  References() = default;
  std::vector<std::vector<std::string>> segments_;  // per segment, its references
  int nrefs_ = 0;                                   // -1: variable
};

}  // namespace t2t
