#include "t2t/kernels/panel_prefetch.h"

#include <unistd.h>

#include <atomic>
#include <exception>
#include <fstream>
#include <string>

namespace t2t {
namespace {

std::atomic<int64_t> packed_bytes{0};

// The size of the L3 cache this process's first CPU shares, as the kernel
// says (sysfs); 0 when it does not.
int64_t l3_from_sysfs() {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream level_file(dir + "/level"), size_file(dir + "/size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || level != 3 || !(size_file >> size)) continue;
    try {
      size_t used = 0;
      const int64_t n = std::stoll(size, &used);
      const char unit = used < size.size() ? size[used] : ' ';
      return unit == 'K' ? n << 10 : unit == 'M' ? n << 20 : n;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

// The L3 cache's size: the kernel's figure (glibc's sysconf counts every
// L3 of an AMD package in a virtual machine here: 384 MiB for 32), else
// sysconf's, else 32 MiB.
int64_t l3_bytes() {
  static const int64_t bytes = [] {
    if (const int64_t size = l3_from_sysfs(); size > 0) return size;
    const long size = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return size > 0 ? static_cast<int64_t>(size) : int64_t{32} << 20;
  }();
  return bytes;
}

}  // namespace

void PackedWeightBytes::set(int64_t bytes) {
  packed_bytes.fetch_add(bytes - bytes_, std::memory_order_relaxed);
  bytes_ = bytes;
}

bool read_ahead() { return packed_bytes.load(std::memory_order_relaxed) > l3_bytes(); }

}  // namespace t2t
