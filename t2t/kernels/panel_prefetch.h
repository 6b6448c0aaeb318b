// Reading the next weight panel ahead, for the panel kernels of the CPU
// products (cpu_linear.cc, int8_panels.cc). A decoding step streams all of
// a large model's weights from memory, faster than the hardware prefetcher
// brings them; prefetches of the next panel spread over the calls of the
// current one keep memory busy while the core computes. The arithmetic is
// unchanged, so the outputs are bit for bit the same.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

namespace t2t {

// The packed weights alive in the process (CpuLinearWeight, Int8PanelWeight), in
// bytes: a weight counts while the object holding its counter lives.
class PackedWeightBytes {
 public:
  PackedWeightBytes() = default;
  PackedWeightBytes(const PackedWeightBytes&) = delete;
  PackedWeightBytes& operator=(const PackedWeightBytes&) = delete;
  ~PackedWeightBytes() { set(0); }
  void set(int64_t bytes);  // this holder's bytes from now on

 private:
  int64_t bytes_ = 0;
};

// Whether the products read their panels ahead: when the packed weights
// alive are more than the L3 cache holds. A small model's weights stay in
// the caches, where reading ahead only costs its instructions. The AVX2
// kernels read ahead whatever this says.
bool read_ahead();

// One kernel call's part of reading the next panel, a `tick` per step of
// its inner loop.
class PanelPrefetch {
 public:
  // Reads nothing new: each tick touches `here`, a line the call reads anyway.
  explicit PanelPrefetch(const void* here) : at_(static_cast<const char*>(here)) {}
  PanelPrefetch(const char* at, int64_t stride, int64_t second)
      : at_(at), stride_(stride), second_(second) {}

  inline void tick() {
    __builtin_prefetch(at_, 0, 3);  // prefetcht0 on x86
    __builtin_prefetch(at_ + second_, 0, 3);
    at_ += stride_;
  }

  // The two addresses the next tick prefetches.
  std::array<const char*, 2> next_lines() const { return {at_, at_ + second_}; }

 private:
  const char* at_;
  int64_t stride_ = 0, second_ = 0;
};

// Reading nothing ahead: the same kernels with nothing added to their loop.
struct NoPrefetch {
  inline void tick() {}
};

// How the calls over one panel share the reading of the next: a panel of
// `bytes`, read by `groups` calls (row groups) of `steps` steps each, every
// call an even share. Worked out once a product, so a call pays no division.
class PanelReadAhead {
 public:
  PanelReadAhead(int64_t bytes, int64_t groups, int64_t steps) {
    const int64_t lines = (bytes + 63) / 64;
    groups = std::max<int64_t>(1, groups);
    steps = std::max<int64_t>(1, steps);
    share_ = (lines + groups - 1) / groups * 64;
    // Bytes a step, at most two lines (a float32 panel's input); an int8
    // panel with one row group has half of it read ahead, the rest left to
    // the hardware prefetcher.
    stride_ = std::min<int64_t>(128, (share_ + steps - 1) / steps);
    second_ = stride_ > 64 ? 64 : 0;
  }

  // Row group `group`'s part of `next` (null: none). The last groups may
  // run past the panel's end: a prefetch never faults.
  template <class Ahead>
  Ahead for_group(const void* here, const void* next, int64_t group) const {
    if constexpr (std::is_same_v<Ahead, NoPrefetch>) {
      return {};
    } else {
      if (!next) return PanelPrefetch(here);
      return {static_cast<const char*>(next) + group * share_, stride_, second_};
    }
  }

 private:
  int64_t share_ = 0, stride_ = 0, second_ = 0;
};

// The loop both panel products run: panels [begin, end) of a packed weight
// (`panels`, each `panel_bytes`), rows [0, rows) in chunks of `chunk_rows`
// (every panel for a chunk before the next chunk), each panel's rows in
// groups of at most `group_rows`: call(p, r, n, ahead) for panel p and rows
// [r, r + n), with `ahead` that call's share of the next panel (after the
// last, the first again for the next chunk) over its `steps` steps.
template <class Ahead, class Call>
void for_each_panel_call(const void* panels, int64_t panel_bytes, int64_t begin, int64_t end,
                         int64_t rows, int64_t chunk_rows, int64_t group_rows, int64_t steps,
                         Call&& call) {
  const char* base = static_cast<const char*>(panels);
  for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const int64_t chunk = std::min(chunk_rows, rows - r0);
    const int64_t groups = (chunk + group_rows - 1) / group_rows;
    const PanelReadAhead plan(panel_bytes, groups, steps);
    for (int64_t p = begin; p < end; ++p) {
      const char* panel = base + p * panel_bytes;
      const char* next = p + 1 < end          ? panel + panel_bytes
                         : r0 + chunk < rows ? base + begin * panel_bytes
                                             : nullptr;
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t r = r0 + g * group_rows;
        call(p, r, std::min(group_rows, r0 + chunk - r), plan.for_group<Ahead>(panel, next, g));
      }
    }
  }
}

}  // namespace t2t
