// Corpus BLEU-4 over token sequences as T2T's bleu_hook.compute_bleu counts
// it: clipped n-gram matches, orders without a match smoothed as
// 1 / (2^k * possible), brevity penalty exp(1 - r/c) when shorter.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace t2t {

class BleuStats {
 public:
  static constexpr int kMaxOrder = 4;

  // Adds one reference/translation pair.
  void add(const std::vector<int64_t>& reference, const std::vector<int64_t>& translation);
  // In [0, 1]; 0 when nothing was added.
  double score() const;

  int64_t reference_length() const { return reference_length_; }
  int64_t translation_length() const { return translation_length_; }
  // Per n-gram order (index 0 = unigrams): clipped matches and the
  // translation's n-grams.
  const std::array<int64_t, kMaxOrder>& matches() const { return matches_; }
  const std::array<int64_t, kMaxOrder>& possible() const { return possible_; }

 private:
  std::array<int64_t, kMaxOrder> matches_{};
  std::array<int64_t, kMaxOrder> possible_{};
  int64_t reference_length_ = 0;
  int64_t translation_length_ = 0;
};

}  // namespace t2t
