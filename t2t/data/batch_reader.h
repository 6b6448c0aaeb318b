// The training and evaluation input pipeline: TFRecord shards of
// tf.train.Example {"inputs", "targets"} grouped into length buckets and
// padded into int64 batches, as T2T's input_fn does on GPUs
// (utils/data_reader.py: batching_scheme, bucket_by_sequence_length).
//
// Training: each epoch reads this worker's files in a freshly shuffled
// order through a shuffle buffer of examples, drops examples longer than
// max_length, and repeats forever; a length bucket becomes a batch as soon
// as it holds its batch size. Evaluation: one pass in file order, long
// examples kept, partial buckets flushed at the end.
//
// Training then shuffles the ready batches too, as T2T does with
// batch_shuffle_size: a batch goes into a buffer of that many and a random
// one comes out. A batch holds examples read close together (the example
// buffer holds about a thousand, fewer than a big batch of short
// sentences); drawing batches from a window of hundreds spreads stretches
// of one file, one corpus, over a much longer stretch of training.
//
// A background thread fills a bounded queue of ready batches, so the
// training step does not wait on I/O.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "t2t/data/batching.h"
#include "t2t/data/data_mix.h"
#include "t2t/data/reader_state.h"

namespace t2t {

class HParams;

struct ReaderOptions {
  bool training = true;
  // The problem was asked for as "<name>_rev": the model's inputs are the
  // files' "targets" and the other way round.
  bool reversed = false;
  uint64_t seed = 0;
  // Data parallelism: this reader is worker `worker` of `num_workers` and
  // reads the files i with i % num_workers == worker; with fewer files than
  // workers, every file's records j with j % num_workers == worker instead.
  int64_t worker = 0;
  int64_t num_workers = 1;
  // Training only: examples held back and drawn from at random. 0 or 1: none.
  int64_t shuffle_buffer = 1024;
  // Training only: ready batches held back and drawn from at random (T2T's
  // batch_shuffle_size). 0 or 1: none. It draws from a generator of its
  // own, so it only reorders the batches the reader makes without it.
  int64_t batch_shuffle = 0;
  // Ready batches the background thread keeps queued.
  int64_t prefetch = 8;
  // Evaluation drops examples longer than max_length only when set (T2T's
  // eval_drop_long_sequences); training always drops them.
  bool eval_drop_long_sequences = false;
  // Cut inputs / targets to this many tokens before anything else; 0: keep.
  int64_t max_input_seq_length = 0;
  int64_t max_target_seq_length = 0;
  // Page-lock each batch on the reading thread, so that the training step's
  // copy to a CUDA device is asynchronous. Only for a CUDA run: pinning
  // needs a CUDA driver.
  bool pin_memory = false;
};

// ReaderOptions with the hparams that concern reading (eval_drop_long_sequences,
// max_input_seq_length, max_target_seq_length, and for training
// batch_shuffle_size) filled in. Throws t2t::Error for a negative
// batch_shuffle_size.
ReaderOptions reader_options(const HParams& hp, bool training, bool reversed, uint64_t seed);

class BatchReader {
 public:
  // Starts reading at once: from the beginning, or from `resume` (a state
  // taken from a reader over the same files with the same options). Throws
  // t2t::Error for an empty file list, bad options or a state that does not
  // fit; errors while reading come out of next().
  BatchReader(std::vector<std::string> files, BatchingScheme scheme, ReaderOptions options,
              std::optional<ReaderState> resume = std::nullopt);
  // Training on a data mix (data_mix.h): its parts drawn by weight.
  BatchReader(DataMix mix, BatchingScheme scheme, ReaderOptions options,
              std::optional<ReaderState> resume = std::nullopt);
  // Stops the background thread and waits for it.
  ~BatchReader();

  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;

  // The next batch, waiting for it if need be; nullopt once an evaluation
  // pass is over (training never ends). An error of the background thread
  // (a corrupt record, a missing file) is thrown here, after the batches
  // made before it.
  std::optional<Batch> next();

  // The state just after the last batch next() returned (or the starting
  // state before any): save it with a checkpoint to resume exactly there.
  ReaderState state() const;
  // Complete passes over this worker's data as of the last batch returned.
  int64_t epoch() const;

  const BatchingScheme& scheme() const { return scheme_; }
  const ReaderOptions& options() const { return options_; }

 private:
  struct Item {
    Batch batch;
    ReaderState state;  // right after this batch
  };
  class Producer;

  BatchReader(std::vector<std::string> files, BatchingScheme scheme, ReaderOptions options,
              std::optional<ReaderState> resume, DataMix mix);
  void run();

  std::vector<std::string> files_;  // a mix's, part after part
  DataMix mix_;                     // empty: one split
  BatchingScheme scheme_;
  ReaderOptions options_;
  std::unique_ptr<Producer> producer_;
  ReaderState consumed_;  // state after the last batch handed out

  mutable std::mutex mutex_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<Item> queue_;
  bool stop_ = false;
  bool done_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace t2t
