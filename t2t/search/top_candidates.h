// The first half of a beam-search step: every alive hypothesis grown by
// every id, scored, and the best few of each sentence kept.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace t2t {

struct Candidates {
  at::Tensor scores;     // [rows, count] float32: log-probability / penalty, best first
  at::Tensor log_probs;  // [rows, count] float32
  at::Tensor beams;      // [rows, count] int64: which alive hypothesis was grown
  at::Tensor ids;        // [rows, count] int64: by which id
};

// logits [rows * beams, vocab] (row-major by sentence, then beam),
// alive_log_probs [rows, beams] float32 (-inf where there is no
// hypothesis). A candidate's log-probability is its hypothesis's plus
// log_softmax(logits) of its id; the `count` best per sentence are kept
// (count <= beams * vocab), ties going to the lower beam, then id.
Candidates top_candidates(const at::Tensor& logits, const at::Tensor& alive_log_probs,
                          int64_t count, double penalty);

// The ATen version, whatever the device (for tests).
Candidates top_candidates_aten(const at::Tensor& logits, const at::Tensor& alive_log_probs,
                               int64_t count, double penalty);

}  // namespace t2t
