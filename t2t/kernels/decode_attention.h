// Attention for one decoding step on the CPU: one query per row and head.
// Self-attention reads each row's history through a table of slots, so
// reordering beams moves a row of that table instead of the cached keys
// and values.
//
// q float32; keys and values both float32 or both bfloat16. Every tensor's
// last dimension must be contiguous; the others may have any strides.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

// Whether the kernels below take tensors of this device and type.
bool decode_attention_supported(const at::Tensor& like);

// Self-attention over a cache whose position p of row r lives in slot
// slots[r][p].
//   q       [rows, heads, depth]
//   keys    [num_slots, heads, capacity, key_depth] (key_depth == depth)
//   values  [num_slots, heads, capacity, value_depth]
//   slots   [rows, >= length] int64, each in [0, num_slots)
// Attends to positions [0, length) -> [rows, heads * value_depth].
at::Tensor attend_slots(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                        const at::Tensor& slots, int64_t length, double scale);

// Writes x [rows, heads, depth] (float32, last dimension contiguous) at
// `position` of slots [0, rows) of a contiguous cache [slots, heads,
// capacity, depth], float32 or bfloat16 (rounded to nearest even).
void store_position(const at::Tensor& cache, int64_t position, const at::Tensor& x);

// Encoder-decoder attention where `group` consecutive rows share a row of
// the memory (the beams of one sentence).
//   q       [rows, heads, depth]
//   keys    [rows / group, heads, memory_length, depth]
//   values  [rows / group, heads, memory_length, value_depth]
//   allowed [rows / group, memory_length] bool: false at padding
// -> [rows, heads * value_depth].
at::Tensor attend_memory(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                         const at::Tensor& allowed, int64_t group, double scale);

// The versions of the kernels' inner loop this CPU can run, best first
// ("avx512", "avx2", "plain"), and, for tests, pinning one process-wide
// until unpinned (""). A pinned version that cannot take a call's depths
// leaves it to "plain".
std::vector<std::string> decode_attention_kernels();
void pin_decode_attention_kernel(const std::string& name);

}  // namespace t2t
