// What a search changes in a step's logits before choosing from them: ids
// banned, rows forced to one id, ids penalised for repeating. Gathered per
// row on the CPU, then applied on the logits' device in a few indexed ops,
// so a step that asks for none costs nothing.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace t2t {

class LogitEdits {
 public:
  void ban(int64_t row, int64_t id);
  void force(int64_t row, int64_t id);
  void penalize(int64_t row, int64_t id);
  bool empty() const { return ban_rows_.empty() && force_rows_.empty() && penalty_rows_.empty(); }

  // logits [rows, vocab] float32, changed in place. Penalised logits x
  // become x / penalty where x > 0 and x * penalty elsewhere (CTRL's
  // repetition penalty, as CTranslate2 applies it); banned ones -inf; a
  // forced row keeps its id's logit and every other becomes -inf.
  void apply(at::Tensor& logits, double penalty) const;

 private:
  std::vector<int64_t> ban_rows_, ban_ids_, force_rows_, force_ids_, penalty_rows_, penalty_ids_;
};

// The ids that, appended to `ids`, would repeat an n-gram of size `n` that
// `ids` already holds (fairseq's no_repeat_ngram_size). Empty for n < 1.
std::vector<int64_t> repeated_ngram_ids(const std::vector<int64_t>& ids, int64_t n);

}  // namespace t2t
