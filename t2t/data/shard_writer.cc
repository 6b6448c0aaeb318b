#include "t2t/data/shard_writer.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/io/tfrecord.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// Pairs are encoded in chunks: big enough to amortise the hand-off between
// threads, small enough to keep memory flat.
constexpr size_t kChunkPairs = 2048;

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<EncodedExample> encode_chunk(const PairEncoder& encode, std::vector<TextPair> pairs) {
  std::vector<EncodedExample> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) out.push_back(encode(p));
  return out;
}

void shuffle_shard(const std::string& unshuffled, const std::string& final_path, uint64_t seed) {
  std::vector<std::string> records;
  {
    TFRecordReader reader(unshuffled);
    std::string record;
    while (reader.next(&record)) records.push_back(std::move(record));
  }
  std::mt19937_64 rng(seed);
  std::shuffle(records.begin(), records.end(), rng);
  const std::string tmp = temp_path_for(final_path);
  {
    TFRecordWriter writer(tmp);
    for (const auto& r : records) writer.write(r);
    writer.close();
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    fs::remove(tmp);
    throw Error("cannot rename '" + tmp + "' to '" + final_path + "'");
  }
  fs::remove(unshuffled);
}

}  // namespace

ShardWriteResult write_shuffled_shards(SampleStream& stream, const PairEncoder& encode,
                                       const std::vector<std::string>& paths, int threads,
                                       uint64_t seed) {
  const Stopwatch timer;
  const int workers = resolve_threads(threads);
  const size_t n = paths.size();
  ShardWriteResult result;

  // Phase 1: encode in parallel, deal round-robin into unshuffled files.
  std::vector<std::string> unshuffled(n);
  std::vector<std::unique_ptr<TFRecordWriter>> writers(n);
  for (size_t i = 0; i < n; ++i) {
    unshuffled[i] = paths[i] + ".unshuffled.tmp";
    writers[i] = std::make_unique<TFRecordWriter>(unshuffled[i]);
  }
  std::deque<std::future<std::vector<EncodedExample>>> pending;
  size_t next_shard = 0;
  Stopwatch since_log;
  auto drain_one = [&]() {
    for (auto& ex : pending.front().get()) {
      writers[next_shard]->write(ex.record);
      next_shard = (next_shard + 1) % n;
      ++result.examples;
      result.input_tokens += ex.input_tokens;
      result.target_tokens += ex.target_tokens;
    }
    pending.pop_front();
    if (since_log.seconds() > 5) {
      since_log.restart();
      const double secs = timer.seconds();
      spdlog::info("  encoded {} pairs ({:.0f} pairs/s)", result.examples, result.examples / secs);
    }
  };
  try {
    bool more = true;
    while (more) {
      std::vector<TextPair> chunk;
      chunk.reserve(kChunkPairs);
      TextPair pair;
      while (chunk.size() < kChunkPairs && (more = stream.next(&pair)))
        chunk.push_back(std::move(pair));
      if (!chunk.empty())
        pending.push_back(
            std::async(std::launch::async, encode_chunk, std::cref(encode), std::move(chunk)));
      // Keep a bounded number of chunks in flight: the workers stay busy and
      // memory stays flat.
      while (pending.size() > static_cast<size_t>(workers) || (!more && !pending.empty()))
        drain_one();
    }
    for (auto& w : writers) w->close();
  } catch (...) {
    // Bad input or a full disk: leave no temporary files behind.
    pending.clear();
    writers.clear();
    for (const auto& u : unshuffled) fs::remove(u);
    throw;
  }

  if (result.examples == 0) {
    for (const auto& u : unshuffled) fs::remove(u);
    result.seconds = timer.seconds();
    return result;
  }

  // Phase 2: shuffle each missing shard, a few at a time.
  std::vector<size_t> todo;
  for (size_t i = 0; i < n; ++i) {
    if (fs::exists(paths[i])) fs::remove(unshuffled[i]);
    else todo.push_back(i);
  }
  for (size_t b = 0; b < todo.size(); b += workers) {
    std::vector<std::future<void>> jobs;
    for (size_t k = b; k < std::min(todo.size(), b + workers); ++k) {
      size_t i = todo[k];
      jobs.push_back(std::async(std::launch::async, shuffle_shard, unshuffled[i], paths[i],
                                seed * 1000003ULL + i));
    }
    for (auto& j : jobs) j.get();
  }
  result.seconds = timer.seconds();
  return result;
}

}  // namespace t2t
