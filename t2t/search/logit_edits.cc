#include "t2t/search/logit_edits.h"

#include <ATen/ATen.h>

#include <limits>

namespace t2t {
namespace {

at::Tensor index_tensor(const std::vector<int64_t>& v, const at::Device& device) {
  return at::tensor(v, at::kLong).to(device);
}

}  // namespace

void LogitEdits::ban(int64_t row, int64_t id) {
  ban_rows_.push_back(row);
  ban_ids_.push_back(id);
}

void LogitEdits::force(int64_t row, int64_t id) {
  force_rows_.push_back(row);
  force_ids_.push_back(id);
}

void LogitEdits::penalize(int64_t row, int64_t id) {
  penalty_rows_.push_back(row);
  penalty_ids_.push_back(id);
}

void LogitEdits::apply(at::Tensor& logits, double penalty) const {
  if (empty()) return;
  const auto device = logits.device();
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (!penalty_rows_.empty() && penalty != 1.0) {
    const auto rows = index_tensor(penalty_rows_, device), ids = index_tensor(penalty_ids_, device);
    const auto x = logits.index({rows, ids});
    logits.index_put_({rows, ids}, at::where(x > 0, x / penalty, x * penalty));
  }
  // A forced id keeps its logit even where a ban would have taken it: the
  // caller must have that id.
  at::Tensor force_rows, force_ids, kept;
  if (!force_rows_.empty()) {
    force_rows = index_tensor(force_rows_, device);
    force_ids = index_tensor(force_ids_, device);
    kept = logits.index({force_rows, force_ids});
  }
  if (!ban_rows_.empty())
    logits.index_put_({index_tensor(ban_rows_, device), index_tensor(ban_ids_, device)},
                      at::scalar_tensor(kNegInf, logits.options()));
  if (kept.defined()) {
    logits.index_fill_(0, force_rows, kNegInf);
    logits.index_put_({force_rows, force_ids}, kept);
  }
}

std::vector<int64_t> repeated_ngram_ids(const std::vector<int64_t>& ids, int64_t n) {
  std::vector<int64_t> out;
  const auto len = static_cast<int64_t>(ids.size());
  if (n < 1 || len < n - 1) return out;
  // The last n - 1 ids, and every earlier place they occur: what followed
  // there is banned.
  for (int64_t start = 0; start + n - 1 < len; ++start) {
    bool same = true;
    for (int64_t j = 0; j < n - 1 && same; ++j) same = ids[start + j] == ids[len - (n - 1) + j];
    if (same) out.push_back(ids[start + n - 1]);
  }
  return out;
}

}  // namespace t2t
