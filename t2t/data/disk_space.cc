#include "t2t/data/disk_space.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// Per example: the TFRecord's length, CRCs (16 bytes) and the Example's
// framing with its two feature names (about 40), and the two EOS ids.
constexpr double kFramingBytes = 58;
// Shard bytes per byte of text, ids only. Measured on English-Chinese text
// (t2t's synthetic WMT-like corpus and the bundled sample, 1k to 32k
// vocabularies: 0.28 to 0.40) and rounded up; bytes: ASCII letters are
// 1-byte ids, UTF-8 bytes above 0x7C 2-byte ones.
constexpr double kLearnedIdBytesPerTextByte = 0.45;
constexpr double kByteIdBytesPerTextByte = 1.7;

fs::path existing_parent(fs::path p) {
  p = fs::absolute(p);
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path())
    p = p.parent_path();
  return p;
}

}  // namespace

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

int64_t estimate_shard_bytes(const SplitSize& split, bool byte_vocabulary) {
  const double per_byte = byte_vocabulary ? kByteIdBytesPerTextByte : kLearnedIdBytesPerTextByte;
  return static_cast<int64_t>(split.pairs * kFramingBytes + split.text_bytes * per_byte);
}

DiskNeed estimate_disk_need(const std::vector<SplitSize>& splits, bool byte_vocabulary,
                            int workers) {
  DiskNeed need;
  for (const SplitSize& s : splits) {
    const int64_t bytes = estimate_shard_bytes(s, byte_vocabulary);
    const int in_flight = std::max(1, std::min(workers, s.shards));
    const int64_t peak = need.final_bytes + bytes + bytes * in_flight / std::max(1, s.shards);
    need.peak_bytes = std::max(need.peak_bytes, peak);
    need.final_bytes += bytes;
    need.text_bytes += s.text_bytes;
  }
  return need;
}

DiskVerdict judge_disk_space(int64_t peak_bytes, int64_t free_bytes) {
  if (free_bytes * 4 < peak_bytes * 3) return DiskVerdict::kShort;
  if (free_bytes * 2 < peak_bytes * 3) return DiskVerdict::kClose;
  return DiskVerdict::kEnough;
}

void check_disk_space(const std::string& data_dir, const std::vector<SplitSize>& splits,
                      bool byte_vocabulary, int workers) {
  if (splits.empty()) return;
  const DiskNeed need = estimate_disk_need(splits, byte_vocabulary, workers);
  std::string sizes;
  for (const SplitSize& s : splits)
    sizes += (sizes.empty() ? "" : ", ") + s.split + " ~" + std::to_string(s.pairs) + " pairs";
  std::error_code ec;
  const fs::path where = existing_parent(data_dir);
  const fs::space_info space = fs::space(where, ec);
  if (ec) {
    spdlog::info("disk: the shards need about {} ({} at the peak, with their temporary files), "
                 "from {} of text ({}); the free space of '{}' is unknown: {}",
                 human_bytes(need.final_bytes), human_bytes(need.peak_bytes),
                 human_bytes(need.text_bytes), sizes, where.string(), ec.message());
    return;
  }
  const int64_t free_bytes = static_cast<int64_t>(space.available);
  spdlog::info("disk: the shards need about {} ({} at the peak, with their temporary files), "
               "from {} of text ({}); {} free in {}",
               human_bytes(need.final_bytes), human_bytes(need.peak_bytes),
               human_bytes(need.text_bytes), sizes, human_bytes(free_bytes), data_dir);
  switch (judge_disk_space(need.peak_bytes, free_bytes)) {
    case DiskVerdict::kEnough: return;
    case DiskVerdict::kClose:
      spdlog::warn("disk: only {} free in {} for about {} at the peak: the run may fail for lack "
                   "of space (it would leave no partial shards); free some space or use another "
                   "data_dir to be safe", human_bytes(free_bytes), data_dir,
                   human_bytes(need.peak_bytes));
      return;
    case DiskVerdict::kShort:
      throw OptionError("data_dir",
                        "not enough disk space in {data_dir} '" + data_dir +
                            "': the shards need about " + human_bytes(need.peak_bytes) +
                            " at the peak (" + human_bytes(need.final_bytes) + " once done) for " +
                            human_bytes(need.text_bytes) + " of text, and only " +
                            human_bytes(free_bytes) + " is free. Free some space, point "
                            "{data_dir} at a larger disk, or write fewer examples with "
                            "{max_cases}");
  }
}

}  // namespace t2t
