#include "t2t/data/batching.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"

namespace t2t {

// ---------------------------------------------------------------------------
// Batching scheme

std::vector<int64_t> bucket_boundaries(int64_t max_length, int64_t min_length_bucket,
                                       double length_bucket_step) {
  if (!(length_bucket_step > 1.0))
    throw Error("length_bucket_step must be greater than 1, got " +
                std::to_string(length_bucket_step));
  if (min_length_bucket < 1)
    throw Error("min_length_bucket must be at least 1, got " + std::to_string(min_length_bucket));
  std::vector<int64_t> out;
  for (int64_t x = min_length_bucket; x < max_length;) {
    out.push_back(x);
    x = std::max(x + 1, static_cast<int64_t>(static_cast<double>(x) * length_bucket_step));
  }
  return out;
}

size_t BatchingScheme::bucket(int64_t length) const {
  return static_cast<size_t>(std::upper_bound(boundaries.begin(), boundaries.end(), length) -
                             boundaries.begin());
}

namespace {

// T2T rounds every bucket's batch size down to a divisor of one of these so
// that its tf.data windows split evenly; kept for identical batch sizes.
constexpr int64_t kHighlyComposite[] = {
    1,        2,        4,        6,        12,       24,       36,       48,       60,
    120,      180,      240,      360,      720,      840,      1260,     1680,     2520,
    5040,     7560,     10080,    15120,    20160,    25200,    27720,    45360,    50400,
    55440,    83160,    110880,   166320,   221760,   277200,   332640,   498960,   554400,
    665280,   720720,   1081080,  1441440,  2162160,  2882880,  3603600,  4324320,  6486480,
    7207200,  8648640,  10810800, 14414400, 17297280, 21621600, 32432400, 36756720, 43243200,
    61261200, 73513440, 110270160};

}  // namespace

BatchingScheme batching_scheme(int64_t batch_size, int64_t max_length, int64_t min_length_bucket,
                               double length_bucket_step, int64_t min_length,
                               int64_t shard_multiplier) {
  if (batch_size < 1) throw Error("batch_size must be at least 1, got " + std::to_string(batch_size));
  if (shard_multiplier < 1)
    throw Error("shard_multiplier must be at least 1, got " + std::to_string(shard_multiplier));
  if (max_length < 0) throw Error("max_length must not be negative, got " + std::to_string(max_length));
  BatchingScheme s;
  s.max_length = max_length > 0 ? max_length : batch_size;
  s.min_length = min_length;
  if (s.max_length < min_length)
    throw Error("max_length (" + std::to_string(s.max_length) +
                ") must be at least min_length (" + std::to_string(min_length) + ")");
  s.boundaries = bucket_boundaries(s.max_length, min_length_bucket, length_bucket_step);

  std::vector<int64_t> uppers = s.boundaries;
  uppers.push_back(s.max_length);
  int64_t largest = 1;
  for (int64_t upper : uppers) {
    s.batch_sizes.push_back(std::max<int64_t>(1, batch_size / upper));
    largest = std::max(largest, s.batch_sizes.back());
  }
  int64_t window = 1;
  for (int64_t h : kHighlyComposite)
    if (h <= 3 * largest) window = h;
  for (int64_t& size : s.batch_sizes) {
    int64_t d = size;
    while (window % d != 0) --d;  // d reaches 1 at worst
    size = d * shard_multiplier;
  }
  return s;
}

BatchingScheme batching_scheme(const HParams& hp, int64_t shard_multiplier) {
  if (hp.has("use_fixed_batch_size") && hp.get_bool("use_fixed_batch_size")) {
    // batch_size counts examples: one bucket, whatever the lengths.
    BatchingScheme s;
    const int64_t batch_size = hp.get_int("batch_size");
    if (batch_size < 1) throw Error("batch_size must be at least 1, got " + std::to_string(batch_size));
    s.max_length = hp.get_int("max_length") > 0 ? hp.get_int("max_length") : batch_size;
    s.min_length = hp.get_int("min_length");
    s.batch_sizes = {batch_size * shard_multiplier};
    return s;
  }
  return batching_scheme(hp.get_int("batch_size"), hp.get_int("max_length"),
                         hp.get_int("min_length_bucket"), hp.get_float("length_bucket_step"),
                         hp.get_int("min_length"), shard_multiplier);
}

int64_t Batch::size() const { return targets.defined() ? targets.size(0) : 0; }

}  // namespace t2t
