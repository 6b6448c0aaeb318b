// Learns a lexical shortlist (lexical_shortlist.h) from training pairs of
// ids: the always-allowed targets are the most frequent target tokens; a
// source token's targets are those with the highest p(target | source),
// counted over the pairs it occurs in (co-occurrence) or over the token
// links of word alignments where the pairs have them. Targets already
// always allowed are not repeated in any source token's list.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "t2t/search/lexical_shortlist.h"

namespace t2t {

struct ShortlistBuildOptions {
  int64_t best = 50;        // targets kept per source token
  int64_t frequent = 100;   // always-allowed targets
  int64_t min_count = 2;    // a (source, target) pair seen fewer times is dropped
};

class ShortlistCounts {
 public:
  ShortlistCounts(int64_t source_vocab_size, int64_t target_vocab_size);

  // One training pair (ids, EOS and padding ignored): each distinct source
  // token co-occurs with each distinct target token once.
  void add(const std::vector<int64_t>& source, const std::vector<int64_t>& target);
  // One pair with token links (source position, target position), as the
  // `alignment` feature of t2t-datagen --train_alignments holds them: each
  // link counts once for its two tokens. Links to EOS or outside the pair
  // are skipped.
  void add_aligned(const std::vector<int64_t>& source, const std::vector<int64_t>& target,
                   const std::vector<std::pair<int64_t, int64_t>>& links);

  int64_t pairs() const { return pairs_; }
  LexicalShortlist build(const ShortlistBuildOptions& options) const;

 private:
  void count_target(const std::vector<int64_t>& target);
  int64_t source_size_, target_size_;
  int64_t pairs_ = 0;
  std::vector<int64_t> target_count_;  // occurrences of each target token
  std::vector<int64_t> source_count_;  // pairs (or links) each source token takes part in
  std::unordered_map<uint64_t, uint32_t> joint_;  // source * target_size + target -> count
};

}  // namespace t2t
