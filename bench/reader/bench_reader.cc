// Input pipeline benchmark: t2t::BatchReader, the reader the trainer feeds
// on, in training mode (shuffled file order and shuffle buffer, length
// buckets, repeating) over synthetic TFRecord shards of WMT-like lengths
// (by default 10 shards of 6,000 examples, 3..80 ids per side), read for a
// fixed time. Prints one JSON line: batches and tokens (inputs + targets,
// and targets alone, as t2t-bench-train counts them) handed out per second,
// and the CPU seconds this process spent per batch (the reading thread and
// the hand-over to the caller, which does nothing else), which together say
// how far the reader stays ahead of a training step and what it takes from
// the step's cores.
//
//   t2t-bench-reader
//   t2t-bench-reader --batch_size=8192 --max_length=256 --seconds=10
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "bench/bench_util.h"
#include "t2t/core/error.h"
#include "t2t/core/runtime.h"
#include "t2t/data/batch_reader.h"
#include "t2t/data/batching.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"

namespace {

namespace fs = std::filesystem;
using t2t::bench::cpu_seconds;
using t2t::bench::peak_rss_mib;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
  int64_t shards = 10;
  int64_t examples_per_shard = 6000;
  int64_t batch_size = 4096;
  int64_t max_length = 256;
  int64_t shuffle_buffer = 1024;
  int64_t prefetch = 8;
  double seconds = 5;
  uint64_t seed = 1;
};

// Writes the shards into `dir`; returns their paths and adds their size to
// `bytes`. Lengths are uniform in 3..80 and ids in 2..31999 (a 32k
// vocabulary), on each side independently.
std::vector<std::string> write_shards(const fs::path& dir, const Options& opt, uint64_t* bytes) {
  std::vector<std::string> files;
  std::mt19937 gen(static_cast<std::mt19937::result_type>(opt.seed));
  std::uniform_int_distribution<int> len(3, 80), tok(2, 31999);
  for (int64_t f = 0; f < opt.shards; ++f) {
    files.push_back((dir / ("bench-train-" + std::to_string(f))).string());
    t2t::TFRecordWriter w(files.back());
    for (int64_t i = 0; i < opt.examples_per_shard; ++i) {
      std::vector<int64_t> a(static_cast<size_t>(len(gen))), b(static_cast<size_t>(len(gen)));
      for (auto& x : a) x = tok(gen);
      for (auto& x : b) x = tok(gen);
      w.write(t2t::serialize_example({{"inputs", a}, {"targets", b}}));
    }
    w.close();
    *bytes += w.bytes_written();
  }
  return files;
}

// The default work directory holds ~16 MB of shards: gone however the
// program ends short of a crash.
struct RemovedAtExit {
  fs::path path;
  ~RemovedAtExit() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

void run(const Options& opt, const fs::path& dir) {
  uint64_t bytes = 0;
  const std::vector<std::string> files = write_shards(dir, opt, &bytes);
  t2t::ReaderOptions reader_options;
  reader_options.training = true;
  reader_options.seed = opt.seed;
  reader_options.shuffle_buffer = opt.shuffle_buffer;
  reader_options.prefetch = opt.prefetch;
  t2t::BatchReader reader(files, t2t::batching_scheme(opt.batch_size, opt.max_length),
                          reader_options);
  reader.next();  // the first batch waits for the thread to start and fill a bucket
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  int64_t batches = 0, examples = 0, tokens = 0, target_tokens = 0;
  while (seconds_since(t0) < opt.seconds) {
    const auto b = reader.next();
    ++batches;
    examples += b->size();
    tokens += b->input_tokens + b->target_tokens;
    target_tokens += b->target_tokens;
  }
  const double seconds = seconds_since(t0);
  const double cpu = cpu_seconds() - cpu0;

  std::ostringstream o;
  o.precision(10);
  o << "{\"bench\": \"reader\", \"shards\": " << opt.shards
    << ", \"examples_per_shard\": " << opt.examples_per_shard << ", \"mb\": " << bytes / 1e6
    << ", \"batch_size\": " << opt.batch_size << ", \"max_length\": " << opt.max_length
    << ", \"shuffle_buffer\": " << opt.shuffle_buffer << ", \"prefetch\": " << opt.prefetch
    << ", \"seconds\": " << seconds << ", \"batches\": " << batches
    << ", \"batches_per_s\": " << batches / seconds << ", \"examples_per_s\": " << examples / seconds
    << ", \"tokens_per_s\": " << tokens / seconds
    << ", \"target_tokens_per_s\": " << target_tokens / seconds << ", \"cpu_seconds\": " << cpu
    << ", \"cpu_ms_per_batch\": " << 1e3 * cpu / static_cast<double>(batches)
    << ", \"epochs\": " << reader.epoch() << ", \"peak_rss_mib\": " << peak_rss_mib() << "}";
  std::cout << o.str() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-bench-reader",
                           "Reads synthetic TFRecord shards with t2t::BatchReader in training "
                           "mode and prints one JSON line of speed figures.");
  options.add_options()  //
      ("shards", "Shards to write and read.", cxxopts::value<int64_t>()->default_value("10"))  //
      ("examples_per_shard", "Examples in each shard.",
       cxxopts::value<int64_t>()->default_value("6000"))  //
      ("batch_size", "Tokens per batch, as the hparam.",
       cxxopts::value<int64_t>()->default_value("4096"))  //
      ("max_length", "Longest example kept, as the hparam.",
       cxxopts::value<int64_t>()->default_value("256"))  //
      ("shuffle_buffer", "Examples in the shuffle buffer.",
       cxxopts::value<int64_t>()->default_value("1024"))  //
      ("prefetch", "Ready batches queued.", cxxopts::value<int64_t>()->default_value("8"))  //
      ("seconds", "How long to read.", cxxopts::value<double>()->default_value("5"))  //
      ("seed", "Seed of the data and the shuffling.",
       cxxopts::value<uint64_t>()->default_value("1"))  //
      ("work_dir", "Where the shards go; default: a temporary directory, removed afterwards.",
       cxxopts::value<std::string>()->default_value(""))  //
      ("h,help", "Print this help.");
  return t2t::bench::bench_main(argc, argv, options, [&](const cxxopts::ParseResult& flags) {
    Options opt;
    opt.shards = flags["shards"].as<int64_t>();
    opt.examples_per_shard = flags["examples_per_shard"].as<int64_t>();
    opt.batch_size = flags["batch_size"].as<int64_t>();
    opt.max_length = flags["max_length"].as<int64_t>();
    opt.shuffle_buffer = flags["shuffle_buffer"].as<int64_t>();
    opt.prefetch = flags["prefetch"].as<int64_t>();
    opt.seconds = flags["seconds"].as<double>();
    opt.seed = flags["seed"].as<uint64_t>();
    if (opt.shards < 1 || opt.examples_per_shard < 1 || opt.seconds <= 0)
      throw t2t::Error("--shards and --examples_per_shard must be >= 1 and --seconds > 0");
    fs::path work_dir = flags["work_dir"].as<std::string>();
    RemovedAtExit temporary;
    if (work_dir.empty()) {
      work_dir = fs::temp_directory_path() / ("t2t_bench_reader_" + std::to_string(::getpid()));
      temporary.path = work_dir;
    }
    fs::create_directories(work_dir);
    run(opt, work_dir);
    return 0;
  });
}
