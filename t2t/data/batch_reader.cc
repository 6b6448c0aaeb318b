// BatchReader (batch_reader.h): the producer that turns this worker's
// examples into batches (example shuffle, length buckets, batch shuffle)
// and snapshots and restores its state, and the background thread that runs
// it ahead of the training step. Reading files is in example_source.h,
// bucketing in length_buckets.h, the state's form in reader_state.h.
#include "t2t/data/batch_reader.h"

#include <ATen/ATen.h>

#include <iterator>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/core/hparams.h"
#include "t2t/data/example_mix.h"
#include "t2t/data/example_source.h"
#include "t2t/data/length_buckets.h"
#include "t2t/data/reader_rng.h"
#include "t2t/data/shuffle_buffer.h"

namespace t2t {

// ---------------------------------------------------------------------------
// The producer: everything that decides the sequence of batches. It runs on
// the background thread only (and in the constructor before that starts).

class BatchReader::Producer {
 public:
  Producer(const std::vector<std::string>& files, const DataMix& mix, const BatchingScheme& scheme,
           const ReaderOptions& options, const ReaderState* resume)
      : files_(files),
        options_(options),
        shuffle_(options.training && options.shuffle_buffer > 1),
        batch_shuffle_(options.training && options.batch_shuffle > 1),
        source_(mix.empty() ? std::unique_ptr<ExampleStream>(
                                  std::make_unique<ExampleSource>(files, scheme, options))
                            : std::make_unique<MixedExamples>(mix, scheme, options)),
        buffer_(options.shuffle_buffer),
        buckets_(scheme),
        batch_buffer_(options.batch_shuffle) {
    if (resume) {
      restore(*resume);
    } else {
      buffer_.rng() =
          ReaderRng(reader_seed(options_.seed, 0x5eedULL + static_cast<uint64_t>(options_.worker)));
      batch_buffer_.rng() = first_batch_rng();
    }
  }

  // Makes the next batch and the state right after it; false once an
  // evaluation pass is over.
  bool next(Batch* batch, ReaderState* state) {
    if (!batch_shuffle_) {
      if (!make_next(batch, nullptr)) return false;
      *state = snapshot();
      return true;
    }
    // Training, which never ends: each new batch takes the place of a
    // random one of the buffer, which goes out.
    for (;;) {
      HeldBatch made;
      make_next(&made.batch, &made.rows);
      if (!batch_buffer_.exchange(&made)) continue;
      *batch = std::move(made.batch);
      *state = snapshot();
      return true;
    }
  }

  ReaderState snapshot() const {
    ReaderState s;
    source_->save(&s);
    s.rng = buffer_.rng().save();
    s.num_files = static_cast<int64_t>(files_.size());
    s.worker = options_.worker;
    s.num_workers = options_.num_workers;
    s.training = options_.training;
    if (batch_shuffle_) s.batch_rng = batch_buffer_.rng().save();
    s.shuffle_buffer.reserve(buffer_.items().size());
    for (const DecodedExample& e : buffer_.items()) s.shuffle_buffer.push_back(e.address);
    buckets_.append_addresses(&s.bucketed);
    for (const HeldBatch& b : batch_buffer_.items()) {
      s.batch_buffer.insert(s.batch_buffer.end(), b.rows.begin(), b.rows.end());
      s.batch_buffer_rows.push_back(static_cast<int64_t>(b.rows.size()));
    }
    return s;
  }

 private:
  // A batch in the batch shuffle buffer, with the addresses of its rows.
  struct HeldBatch {
    Batch batch;
    std::vector<RecordAddress> rows;
  };

  ReaderRng first_batch_rng() const {
    return ReaderRng(reader_seed(options_.seed, 0xba7c4ULL + static_cast<uint64_t>(options_.worker)));
  }

  // The next batch out of the buckets (before the batch shuffle), with its
  // rows' addresses when `rows` is given; false once an evaluation pass is
  // over.
  bool make_next(Batch* batch, std::vector<RecordAddress>* rows) {
    for (;;) {
      DecodedExample ex;
      if (!source_->epoch_read()) {
        if (!source_->next(&ex)) continue;
        if (shuffle_ && !buffer_.exchange(&ex)) continue;
        if (buckets_.add(std::move(ex), batch, rows)) return true;
        continue;
      }
      // This epoch's files are read: empty the shuffle buffer at random.
      if (buffer_.take(&ex)) {
        if (buckets_.add(std::move(ex), batch, rows)) return true;
        continue;
      }
      if (options_.training) {
        source_->next_epoch();
        continue;
      }
      // End of an evaluation pass: what is left goes out bucket by bucket.
      return buckets_.flush(batch, rows);
    }
  }

  void restore(const ReaderState& s) {
    // The source first: a state of a mix, or not, says so before its file
    // count differs.
    source_->restore(s);
    s.check_belongs_to(static_cast<int64_t>(files_.size()), options_.worker, options_.num_workers,
                       options_.training);
    buffer_.rng() = ReaderRng::load(s.rng, "rng");
    buffer_.assign(source_->load(s.shuffle_buffer));
    buckets_.restore(source_->load(s.bucketed));
    restore_batch_buffer(s);
  }

  // The batch shuffle buffer of `s`, each batch rebuilt from its rows.
  void restore_batch_buffer(const ReaderState& s) {
    s.check_batch_rows();
    // A state from before the batch shuffle starts it afresh.
    if (batch_shuffle_)
      batch_buffer_.rng() =
          s.batch_rng.empty() ? first_batch_rng() : ReaderRng::load(s.batch_rng, "batch_rng");
    const int64_t held = static_cast<int64_t>(s.batch_buffer_rows.size());
    const int64_t room = batch_shuffle_ ? options_.batch_shuffle : 0;
    if (held > room)
      throw Error("reader state does not fit this reader: it holds " + std::to_string(held) +
                  " batches for the batch shuffle, more than batch_shuffle_size=" +
                  std::to_string(room) + " allows; resume with the batch_shuffle_size it was "
                  "saved with");
    std::vector<DecodedExample> examples = source_->load(s.batch_buffer);
    size_t next = 0;
    for (int64_t n : s.batch_buffer_rows) {
      std::vector<DecodedExample> rows(std::make_move_iterator(examples.begin() + next),
                                       std::make_move_iterator(examples.begin() + next + n));
      next += static_cast<size_t>(n);
      HeldBatch b;
      pad_batch(&rows, &b.batch, &b.rows);
      batch_buffer_.hold(std::move(b));
    }
  }

  const std::vector<std::string>& files_;
  const ReaderOptions& options_;
  const bool shuffle_;
  const bool batch_shuffle_;

  std::unique_ptr<ExampleStream> source_;
  ShuffleBuffer<DecodedExample> buffer_;
  LengthBuckets buckets_;
  ShuffleBuffer<HeldBatch> batch_buffer_;
};

// ---------------------------------------------------------------------------
// The reader: a background thread running the producer into a bounded queue.

namespace {

std::vector<std::string> all_files(const DataMix& mix) {
  std::vector<std::string> files;
  for (const MixPart& p : mix) files.insert(files.end(), p.files.begin(), p.files.end());
  return files;
}

}  // namespace

BatchReader::BatchReader(DataMix mix, BatchingScheme scheme, ReaderOptions options,
                         std::optional<ReaderState> resume)
    : BatchReader({}, std::move(scheme), options, std::move(resume), std::move(mix)) {}

BatchReader::BatchReader(std::vector<std::string> files, BatchingScheme scheme,
                         ReaderOptions options, std::optional<ReaderState> resume)
    : BatchReader(std::move(files), std::move(scheme), options, std::move(resume), DataMix()) {}

BatchReader::BatchReader(std::vector<std::string> files, BatchingScheme scheme,
                         ReaderOptions options, std::optional<ReaderState> resume, DataMix mix)
    : files_(mix.empty() ? std::move(files) : all_files(mix)),
      mix_(std::move(mix)),
      scheme_(std::move(scheme)),
      options_(options) {
  if (files_.empty()) throw Error("BatchReader: no data files given");
  if (options_.num_workers < 1 || options_.worker < 0 || options_.worker >= options_.num_workers)
    throw Error("BatchReader: worker " + std::to_string(options_.worker) + " of " +
                std::to_string(options_.num_workers) + " workers is not valid");
  if (scheme_.batch_sizes.size() != scheme_.boundaries.size() + 1)
    throw Error("BatchReader: the batching scheme has " +
                std::to_string(scheme_.boundaries.size()) + " boundaries but " +
                std::to_string(scheme_.batch_sizes.size()) + " batch sizes (want one more)");
  for (int64_t b : scheme_.batch_sizes)
    if (b < 1) throw Error("BatchReader: batch size " + std::to_string(b) + " in the scheme");
  if (options_.prefetch < 1) options_.prefetch = 1;
  producer_ =
      std::make_unique<Producer>(files_, mix_, scheme_, options_, resume ? &*resume : nullptr);
  consumed_ = producer_->snapshot();
  thread_ = std::thread([this] { run(); });
}

BatchReader::~BatchReader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  not_full_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BatchReader::run() {
  try {
    for (;;) {
      Item item;
      const bool more = producer_->next(&item.batch, &item.state);
      if (more && options_.pin_memory) {
        item.batch.inputs = item.batch.inputs.pin_memory();
        item.batch.targets = item.batch.targets.pin_memory();
        if (item.batch.alignment.defined())
          item.batch.alignment = item.batch.alignment.pin_memory();
      }
      std::unique_lock<std::mutex> lock(mutex_);
      not_full_.wait(lock, [&] {
        return stop_ || static_cast<int64_t>(queue_.size()) < options_.prefetch;
      });
      if (stop_) return;
      if (!more) {
        done_ = true;
        not_empty_.notify_all();
        return;
      }
      queue_.push_back(std::move(item));
      not_empty_.notify_one();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    done_ = true;
    not_empty_.notify_all();
  }
}

std::optional<Batch> BatchReader::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  not_empty_.wait(lock, [&] { return !queue_.empty() || done_; });
  if (!queue_.empty()) {
    Item item = std::move(queue_.front());
    queue_.pop_front();
    consumed_ = std::move(item.state);
    lock.unlock();
    not_full_.notify_one();
    return std::move(item.batch);
  }
  if (error_) std::rethrow_exception(error_);
  return std::nullopt;
}

ReaderState BatchReader::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return consumed_;
}

int64_t BatchReader::epoch() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return consumed_.epoch;
}

ReaderOptions reader_options(const HParams& hp, bool training, bool reversed, uint64_t seed) {
  ReaderOptions o;
  o.training = training;
  o.reversed = reversed;
  o.seed = seed;
  if (hp.has("eval_drop_long_sequences"))
    o.eval_drop_long_sequences = hp.get_bool("eval_drop_long_sequences");
  if (hp.has("max_input_seq_length")) o.max_input_seq_length = hp.get_int("max_input_seq_length");
  if (hp.has("max_target_seq_length")) o.max_target_seq_length = hp.get_int("max_target_seq_length");
  if (hp.has("batch_shuffle_size")) {
    const int64_t n = hp.get_int("batch_shuffle_size");
    if (n < 0)
      throw Error("hparam batch_shuffle_size=" + std::to_string(n) + " must be >= 0 (ready "
                  "training batches drawn at random from a buffer of that many; 0 or 1: none)");
    if (training) o.batch_shuffle = n;
  }
  return o;
}

}  // namespace t2t
