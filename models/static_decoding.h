// Decoding steps at static shapes, so that a GPU can replay each shape's
// step as a CUDA graph: one launch instead of a few hundred kernel launches,
// which is what a decoding step of tens of rows is bound by on a GPU.
//
// A graph replays the same kernels on the same memory. So the decoder's
// buffers live in one arena at fixed addresses, reused batch after batch,
// and a step runs on the arena's leading rows at bucketed sizes: the rows
// (sentences rounded up, times the beams), the positions attended (powers
// of two) and the source length (powers of two). Padding rows compute
// results nobody reads; padding positions are masked out.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "t2t/core/cuda_graph.h"

namespace t2t {

// Sentences rounded up to 1, 2, 3, 4, 6, 8, 12, 16, 24, ...: a batch that
// loses sentences moves down a bucket at a time, and pads at most a third.
int64_t sentence_bucket(int64_t sentences);
// Positions (self-attention) or source length rounded up to a power of two,
// at least 16.
int64_t length_bucket(int64_t length);

// One shape of step: the arena's first `rows` rows (`rows / group`
// sentences of `group` beams), attending `positions` positions and a
// source of `source` positions.
struct StaticStepShape {
  int64_t rows = 0, group = 1, positions = 0, source = 0;
  bool operator<(const StaticStepShape& o) const {
    return std::tie(rows, group, positions, source) <
           std::tie(o.rows, o.group, o.positions, o.source);
  }
};

// The buffers every static step reads and writes, per decoder layer the
// self-attention caches [rows, heads, positions, depth] and the
// encoder-decoder keys and values [memory rows, heads, source, depth]. One
// search at a time uses it (`busy`). Growing a capacity copies what is
// there and forgets the graphs, which read the old buffers.
class StaticDecodingArena {
 public:
  std::mutex busy;

  // Capacities at least these, for `layers` layers whose keys and values
  // are shaped as `keys` and `values` [*, heads, *, depth] (any layer's
  // encoder-decoder ones) in their type and device: a different shape,
  // type or device starts the arena anew.
  void reserve(size_t layers, const at::Tensor& keys, const at::Tensor& values, int64_t rows,
               int64_t memory_rows, int64_t positions, int64_t source);

  int64_t rows() const { return rows_; }
  int64_t memory_rows() const { return memory_rows_; }
  int64_t positions() const { return positions_; }
  int64_t source() const { return source_; }

  at::Tensor ids;       // [rows] int64: each row's last id
  at::Tensor position;  // [1] int64: the position the step writes
  at::Tensor reorder;   // [rows] int64: the row of the caches each row continues
  std::vector<at::Tensor> self_keys, self_values;      // per layer
  std::vector<at::Tensor> memory_keys, memory_values;  // per layer
  at::Tensor memory_mask;  // [memory rows, 1, 1, source] bool, true where attended
  at::Tensor timing;       // the timing signal [positions, hidden] the steps add

  // A step shape's graph (on a GPU, from its second run) and what its last
  // run wrote.
  struct Step {
    std::unique_ptr<CudaGraph> graph;
    at::Tensor logits;
    int64_t runs = 0;
  };
  Step& step(const StaticStepShape& shape) { return steps_[shape]; }
  size_t graphs() const;
  // Drops every graph (each captured again when its shape next comes).
  void forget_graphs() { steps_.clear(); }

 private:
  int64_t rows_ = 0, memory_rows_ = 0, positions_ = 0, source_ = 0;
  std::map<StaticStepShape, Step> steps_;
};

}  // namespace t2t
