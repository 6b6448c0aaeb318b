// What decoding one source gives back; free of LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace t2t {

// One source's result: `texts` and `scores` per returned hypothesis, best first.
struct Translation {
  std::vector<std::string> texts;
  std::vector<double> scores;
};

// A caller's progress through a translation: sentences done, and the total.
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

}  // namespace t2t
