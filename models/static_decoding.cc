#include "models/static_decoding.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace t2t {

int64_t sentence_bucket(int64_t sentences) {
  if (sentences <= 4) return std::max<int64_t>(1, sentences);
  // 4, 6, 8, 12, 16, 24, ...: a power of two and one and a half of it.
  int64_t power = 4;
  while (true) {
    if (sentences <= power) return power;
    if (sentences <= power + power / 2) return power + power / 2;
    power *= 2;
  }
}

int64_t length_bucket(int64_t length) {
  int64_t bucket = 16;
  while (bucket < length) bucket *= 2;
  return bucket;
}

namespace {

// `old` [old rows, heads, old length, depth] copied into the leading part of
// a zeroed buffer [rows, heads, length, depth]. Zeros, not garbage: masked
// positions weigh 0 in attention, and 0 times a NaN would still be a NaN.
at::Tensor regrown(const at::Tensor& old, int64_t rows, int64_t length, const at::Tensor& like) {
  auto grown = at::zeros({rows, like.size(1), length, like.size(3)}, like.options());
  if (old.defined() && old.numel() > 0)
    grown.narrow(0, 0, old.size(0)).narrow(2, 0, old.size(2)).copy_(old);
  return grown;
}

}  // namespace

void StaticDecodingArena::reserve(size_t layers, const at::Tensor& keys, const at::Tensor& values,
                                  int64_t rows, int64_t memory_rows, int64_t positions,
                                  int64_t source) {
  const bool fits = self_keys.size() == layers && !self_keys.empty() &&
                    self_keys[0].options().type_equal(keys.options()) &&
                    self_keys[0].device() == keys.device() &&
                    self_keys[0].size(1) == keys.size(1) && self_keys[0].size(3) == keys.size(3) &&
                    self_values[0].size(3) == values.size(3);
  if (!fits) {
    self_keys.assign(layers, at::Tensor());
    self_values.assign(layers, at::Tensor());
    memory_keys.assign(layers, at::Tensor());
    memory_values.assign(layers, at::Tensor());
    memory_mask = ids = reorder = position = timing = at::Tensor();
    rows_ = memory_rows_ = positions_ = source_ = 0;
    steps_.clear();
  }
  const bool more_rows = rows > rows_, more_positions = positions > positions_;
  const bool more_memory = memory_rows > memory_rows_, more_source = source > source_;
  if (!(more_rows || more_positions || more_memory || more_source)) return;
  // The graphs read the buffers being replaced.
  steps_.clear();
  const auto ids_options = keys.options().dtype(at::kLong);
  if (more_rows || more_positions) {
    rows_ = std::max(rows_, rows);
    positions_ = std::max(positions_, positions);
    for (size_t i = 0; i < layers; ++i) {
      self_keys[i] = regrown(self_keys[i], rows_, positions_, keys);
      self_values[i] = regrown(self_values[i], rows_, positions_, values);
    }
    auto old_ids = ids, old_reorder = reorder;
    ids = at::zeros({rows_}, ids_options);
    reorder = at::zeros({rows_}, ids_options);
    if (old_ids.defined()) {
      ids.narrow(0, 0, old_ids.size(0)).copy_(old_ids);
      reorder.narrow(0, 0, old_reorder.size(0)).copy_(old_reorder);
    }
    if (!position.defined()) position = at::zeros({1}, ids_options);
  }
  if (more_memory || more_source) {
    memory_rows_ = std::max(memory_rows_, memory_rows);
    source_ = std::max(source_, source);
    for (size_t i = 0; i < layers; ++i) {
      memory_keys[i] = regrown(memory_keys[i], memory_rows_, source_, keys);
      memory_values[i] = regrown(memory_values[i], memory_rows_, source_, values);
    }
    // Rows no sentence has used yet attend to their first position: a row
    // that attends nowhere would divide 0 by 0.
    auto old_mask = memory_mask;
    memory_mask = at::zeros({memory_rows_, 1, 1, source_}, keys.options().dtype(at::kBool));
    memory_mask.select(3, 0).fill_(true);
    if (old_mask.defined())
      memory_mask.narrow(0, 0, old_mask.size(0)).narrow(3, 0, old_mask.size(3)).copy_(old_mask);
  }
}

size_t StaticDecodingArena::graphs() const {
  size_t n = 0;
  for (const auto& [shape, step] : steps_) n += step.graph != nullptr;
  return n;
}

}  // namespace t2t
