// Dynamic beam allocation (Post & Vilar, NAACL 2018), as Hu et al. (NAACL
// 2019) vectorise it: the beam is shared out between "banks" of hypotheses
// by how many constraint ids they have produced, so that hypotheses on
// their way through the constraints are not crowded out by likelier ones
// that ignore them. No LibTorch.
#pragma once

#include <cstdint>
#include <vector>

namespace t2t {

// Candidates `scores` (higher is better; -inf: not a candidate) in `banks`
// -> the indices of at most `beam_size` of them: the best of each bank,
// then the second best of each, and so on, fuller banks first within each
// round (ties: the lower index). A bank with fewer candidates leaves its
// places to the others, so the beam fills whenever there are candidates.
std::vector<int64_t> allocate_beams(const std::vector<float>& scores,
                                    const std::vector<int64_t>& banks, int64_t beam_size);

}  // namespace t2t
