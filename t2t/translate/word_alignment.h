// Word alignments from a model's token-level attention, as Marian's
// --alignment writes them: hard (Pharaoh "i-j" pairs, as fast_align and
// eflomal write them) or soft (each target word's weights over the source
// words). Attention is between tokens (subwords, bytes, EOS); alignments
// are between the words of alignment_words.h, so tokens are first placed
// in the decoded text and then merged into the words they overlap.
// No LibTorch: the attention comes in as nested vectors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "t2t/text/alignment_words.h"
#include "t2t/text/pharaoh.h"
#include "t2t/text/token_spans.h"

namespace t2t {

struct WordAlignment {
  std::vector<std::string> source_words, target_words;
  // soft[j][i]: target word j's attention on source word i. Each row sums
  // to 1 over the source words, or is all zeros where the word's tokens
  // attended only to tokens in no word (EOS) or it has no tokens.
  std::vector<std::vector<float>> soft;
  // (source word, target word) pairs, sorted, no duplicates.
  std::vector<std::pair<int64_t, int64_t>> hard;
};

// attention[t][s]: target token t's attention over source token s (rows:
// target tokens, columns: source tokens); rows and columns beyond the spans
// given are ignored, fewer is a t2t::Error. A token belongs to every word
// its span overlaps (an empty span: to none). Word j's row is the mean over
// its tokens of the summed attention on each source word's tokens, then
// normalised to sum to 1.
// hard: from each source word's share of target word j's attention, where
// tokens in no word (EOS) take a share too, as the NULL word of alignment
// models: with threshold 1, j is aligned to its argmax source word (ties:
// the lowest index) unless the no-word tokens hold more; with 0 <
// threshold < 1, to every word with a share >= threshold (Marian's
// --alignment rule).
// Throws t2t::Error for a threshold outside (0, 1], and for a span that
// leaves its text or is reversed.
WordAlignment align_words(std::string_view source_text,
                          const std::vector<WordSpan>& source_token_spans,
                          std::string_view target_text,
                          const std::vector<WordSpan>& target_token_spans,
                          const std::vector<std::vector<float>>& attention, double threshold);

// Marian's soft alignment text: the target words separated by spaces, each
// a comma-separated list of its source-word weights written short ("%.3g":
// 0.5, 0.333, 1e-05).
std::string soft_alignment_text(const std::vector<std::vector<float>>& soft);

}  // namespace t2t
