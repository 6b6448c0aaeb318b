// The target ids whose logits a batch computes when a lexical shortlist
// (lexical_shortlist.h) narrows the output layer: ascending, so that column
// order is id order and ties between candidates break as they would over
// the whole vocabulary. A default-made one stands for the whole vocabulary.
#pragma once

#include <cstdint>
#include <vector>

namespace t2t {

class OutputColumns {
 public:
  OutputColumns() = default;
  // ids: distinct, ascending, each in [0, vocab_size), at least two of them
  // (a search needs EOS and something else). Throws t2t::Error otherwise.
  OutputColumns(std::vector<int64_t> ids, int64_t vocab_size);

  bool whole() const { return ids_.empty(); }
  // Columns of a restricted step (not defined for whole()).
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  // The id of column `column`; the column itself for whole().
  int64_t id(int64_t column) const { return whole() ? column : ids_[column]; }
  // The column of `id`, or -1 when it has none; `id` itself for whole().
  int64_t column(int64_t id) const;
  const std::vector<int64_t>& ids() const { return ids_; }

 private:
  std::vector<int64_t> ids_;
};

}  // namespace t2t
