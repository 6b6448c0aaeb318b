// The Transformer's decoding state at static shapes (static_decoding.h):
// what start_decoding() returns once set_static_decoding() is on.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "t2t/core/cuda_graph.h"
#include "t2t/model/t2t_model.h"

namespace t2t {

class StaticDecodingArena;

// Which encoder-decoder rows the Transformer's decoding rows read after a
// reordering. Before it, row r read memory row r / group; `from` gives,
// for each new row, the old row it continues (of `rows`). The new group is
// the widest block of consecutive new rows reading one memory row: the
// beams of a sentence made from it (group times the growth), or kept
// together (group), else 1; `kept` is the memory row each block reads.
struct MemoryGrouping {
  int64_t group = 1;
  std::vector<int64_t> kept;
  // Whether `kept` is 0, 1, ... within `memory_rows` rows: nothing moves.
  bool unchanged(int64_t memory_rows) const;
};
MemoryGrouping memory_grouping(const std::vector<int64_t>& from, int64_t rows, int64_t group);

// A dynamic-shape state's memory rows after its rows are reordered by
// `index` ([new_rows] int64): `memory_rows` rows each read by `group`
// consecutive rows before. Sets `group` to the new grouping and returns the
// memory rows to keep ([kept] int64, on index's device), or an undefined
// tensor when they stay as they are.
torch::Tensor regroup_memory(const torch::Tensor& index, int64_t memory_rows, int64_t& group);

// The batch's caches are the arena's leading rows; this holds the arena for
// the whole search. DecoderState::layers stay empty and encoder_output is
// [rows, 0, hidden], for batch_size().
struct StaticTransformerState : DecoderState {
  StaticDecodingArena* arena = nullptr;
  std::unique_lock<std::mutex> hold;  // the arena's `busy`
  // On a GPU: graphs are captured on a stream other than the default one,
  // and the whole search runs there.
  std::optional<UseSideStream> stream;
  int64_t memory_rows = 0;  // sentences: rows of the encoder-decoder keys
  int64_t group = 1;        // rows per memory row (the beams)
  int64_t source = 0;       // the source length's bucket
  // Per row, the arena row whose history it continues, applied by the next
  // step (inside its graph); empty: each row its own.
  std::vector<int64_t> pending;
};

}  // namespace t2t
