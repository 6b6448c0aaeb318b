// CRC-32C (Castagnoli), the checksum of TFRecord files, and its masked form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace t2t {

// The CRC-32C of `data` continued from `crc`, the CRC-32C of what came
// before it (0 for nothing): crc32c_extend(crc32c(a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);

inline uint32_t crc32c(const void* data, size_t n) { return crc32c_extend(0, data, n); }
inline uint32_t crc32c(std::string_view s) { return crc32c_extend(0, s.data(), s.size()); }

// The table-only implementation, used where there is no crc32 instruction.
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n);

// TFRecord stores CRCs masked: a CRC computed over data that itself holds
// CRCs is weak, so the stored value is rotated and offset.
constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;

inline uint32_t mask_crc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta;
}

inline uint32_t unmask_crc32c(uint32_t masked) {
  uint32_t rot = masked - kCrc32cMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace t2t
