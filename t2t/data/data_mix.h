// Training data drawn from several parts at once: real and synthetic pairs,
// tagged back-translation, in-domain and general data. Each part is a
// training split of its own ("train-<part>" shards) with a weight; the
// reader draws the parts in proportion to their weights: after any n
// examples, part i has given n * w_i / sum(w) of them, less than two off
// (at most half an example off with two parts). Each part goes
// round its own files, epoch after epoch, at its own pace. The draw is a
// fixed schedule, not a random one, so the state that resumes it is a
// count per part; the shuffle buffer mixes the parts' examples further.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

// A part as a problem declares it.
struct TrainingPart {
  std::string name;   // lower-case letters, digits, '_'; its split is "train-<name>"
  double weight = 1;  // share of the examples drawn; > 0
  // Instead of a weight: passes over this part per pass over the mix, i.e.
  // a weight of epochs x the part's examples (counted in its shards when the
  // reader starts). Either every part gives epochs or none does.
  double epochs = 0;
  // Written before each source sentence of the part, separated by a space
  // ("<BT>" for tagged back-translation); "": none.
  std::string tag;
};

// The split name of `part`'s shards.
std::string training_part_split(const std::string& part);

// Throws t2t::Error naming `where` and the part at fault: a bad or repeated
// name, a weight or epochs not finite and > 0, epochs on some parts only,
// a tag with whitespace.
void check_training_parts(const std::vector<TrainingPart>& parts, const std::string& where);

// A part as the reader sees it: its files and its weight.
struct MixPart {
  std::string name;
  std::vector<std::string> files;
  double weight = 1;
};
using DataMix = std::vector<MixPart>;

// "real 1, bt 0.5": for logs and errors.
std::string describe_mix(const DataMix& mix);

// Which part gives the next example: the one furthest behind its share
// after this draw, (n + 1) * w_i / sum(w) - taken_i greatest, ties to the
// earlier part.
class MixSchedule {
 public:
  explicit MixSchedule(std::vector<double> weights);
  size_t next() const;
  void take(size_t part) { ++taken_[part]; }
  const std::vector<int64_t>& taken() const { return taken_; }
  // Throws t2t::Error for a count per part of another size or negative.
  void restore(const std::vector<int64_t>& taken);

 private:
  std::vector<double> weights_;
  std::vector<int64_t> taken_;
};

}  // namespace t2t
