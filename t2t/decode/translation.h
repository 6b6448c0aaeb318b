// What decoding one source gives back. Kept free of LibTorch so that the
// server's queue and its tests, which only route results, stay light.
#pragma once

#include <string>
#include <vector>

namespace t2t {

// One source's result: `texts` and `scores` per returned hypothesis, best first.
struct Translation {
  std::vector<std::string> texts;
  std::vector<double> scores;
};

}  // namespace t2t
