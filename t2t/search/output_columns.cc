#include "t2t/search/output_columns.h"

#include <algorithm>
#include <string>

#include "t2t/core/error.h"

namespace t2t {

OutputColumns::OutputColumns(std::vector<int64_t> ids, int64_t vocab_size) : ids_(std::move(ids)) {
  if (ids_.size() < 2)
    throw Error("output columns: " + std::to_string(ids_.size()) +
                " ids; a search needs at least two (EOS and another)");
  for (size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] < 0 || ids_[i] >= vocab_size)
      throw Error("output columns: id " + std::to_string(ids_[i]) +
                  " is outside the target vocabulary [0, " + std::to_string(vocab_size) + ")");
    if (i > 0 && ids_[i] <= ids_[i - 1])
      throw Error("output columns: ids must be distinct and ascending (" +
                  std::to_string(ids_[i - 1]) + " then " + std::to_string(ids_[i]) + ")");
  }
}

int64_t OutputColumns::column(int64_t id) const {
  if (whole()) return id;
  const auto at = std::lower_bound(ids_.begin(), ids_.end(), id);
  return at != ids_.end() && *at == id ? at - ids_.begin() : -1;
}

}  // namespace t2t
