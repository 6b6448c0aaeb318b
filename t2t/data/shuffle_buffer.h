// A buffer that shuffles a stream: items are held back until it is full,
// then each new item takes the place of a held one drawn at random, which
// goes on. The batch reader shuffles examples and, on top, whole batches
// this way, each with a generator of its own that is saved with the
// reader's state.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "t2t/data/reader_rng.h"

namespace t2t {

template <typename T>
class ShuffleBuffer {
 public:
  explicit ShuffleBuffer(int64_t capacity) : capacity_(capacity) {}

  // Holds *item and returns false while there is room; otherwise swaps it
  // with a held item drawn at random, which *item then is, and returns true.
  bool exchange(T* item) {
    if (static_cast<int64_t>(items_.size()) < capacity_) {
      items_.push_back(std::move(*item));
      return false;
    }
    std::swap(*item, items_[rng_.below(items_.size())]);
    return true;
  }

  // Moves a held item drawn at random into *item; false when none is held.
  // The last item takes the freed slot, so a draw costs no shifting.
  bool take(T* item) {
    if (items_.empty()) return false;
    const size_t j = rng_.below(items_.size());
    *item = std::move(items_[j]);
    if (j + 1 != items_.size()) items_[j] = std::move(items_.back());
    items_.pop_back();
    return true;
  }

  // Restoring: the held items, slot by slot.
  void hold(T&& item) { items_.push_back(std::move(item)); }
  void assign(std::vector<T> items) { items_ = std::move(items); }

  const std::vector<T>& items() const { return items_; }
  ReaderRng& rng() { return rng_; }
  const ReaderRng& rng() const { return rng_; }

 private:
  int64_t capacity_;
  ReaderRng rng_;
  std::vector<T> items_;
};

}  // namespace t2t
