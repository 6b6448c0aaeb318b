// Which encoder-decoder attention a model reports: what word alignments are
// read from and what guided-alignment training teaches. No LibTorch.
#pragma once

#include <cstdint>

namespace t2t {

struct AttentionProbe {
  // The decoder layer; negative counts from the last (-1: the last).
  int64_t layer = -1;
  // The head; -1: the mean over every head.
  int64_t head = -1;
};

}  // namespace t2t
