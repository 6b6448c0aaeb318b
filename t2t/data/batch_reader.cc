// BatchReader (batch_reader.h): the producer that turns shards into batches
// (shuffling, bucketing, worker sharding), snapshots and restores of its
// state (reader_state.h), and the background thread that runs it ahead of
// the training step.
#include "t2t/data/batch_reader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/core/hash.h"
#include "t2t/core/hparams.h"
#include "t2t/core/logging.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"

namespace t2t {

// ---------------------------------------------------------------------------
// The producer: everything that decides the sequence of batches. It runs on
// the background thread only (and in the constructor before that starts).

namespace {

// The shuffle generator; SplitMix64's one word of state saves as a number.
class Rng : public SplitMix64 {
 public:
  using SplitMix64::SplitMix64;
  std::string save() const { return std::to_string(state()); }
  static Rng load(const std::string& text, const std::string& source) {
    try {
      size_t used = 0;
      uint64_t v = std::stoull(text, &used);
      if (used == text.size()) return Rng(v);
    } catch (const std::exception&) {
    }
    throw Error("reader state " + source + ": rng '" + text + "' is not a generator state");
  }
};

uint64_t mix(uint64_t a, uint64_t b) {
  Rng r(a ^ (b * 0xd1342543de82ef95ULL));
  return r.next();
}

struct Example {
  RecordAddress address;
  std::vector<int64_t> inputs;
  std::vector<int64_t> targets;
  int64_t length = 0;
};

int64_t count_nonpad(const std::vector<int64_t>& v) {
  return static_cast<int64_t>(v.size()) - std::count(v.begin(), v.end(), int64_t{0});
}

}  // namespace

class BatchReader::Producer {
 public:
  Producer(const std::vector<std::string>& files, const BatchingScheme& scheme,
           const ReaderOptions& options, const ReaderState* resume)
      : files_(files), scheme_(scheme), options_(options), buckets_(scheme.batch_sizes.size()) {
    record_sharding_ = static_cast<int64_t>(files_.size()) < options_.num_workers;
    shuffle_ = options_.training && options_.shuffle_buffer > 1;
    batch_shuffle_ = options_.training && options_.batch_shuffle > 1;
    if (resume) {
      restore(*resume);
    } else {
      rng_ = Rng(mix(options_.seed, 0x5eedULL + static_cast<uint64_t>(options_.worker)));
      batch_rng_ = first_batch_rng();
      start_epoch(0);
    }
  }

  // Makes the next batch and the state right after it; false once an
  // evaluation pass is over.
  bool next(Batch* batch, ReaderState* state) {
    if (!batch_shuffle_) {
      if (!make_next(batch, nullptr)) return false;
      return emitted(state);
    }
    // Training, which never ends: each new batch takes the place of a
    // random one of the buffer, which goes out.
    for (;;) {
      HeldBatch made;
      make_next(&made.batch, &made.rows);
      if (static_cast<int64_t>(batch_buffer_.size()) < options_.batch_shuffle) {
        batch_buffer_.push_back(std::move(made));
        continue;
      }
      std::swap(made, batch_buffer_[batch_rng_.below(batch_buffer_.size())]);
      *batch = std::move(made.batch);
      return emitted(state);
    }
  }

  bool emitted(ReaderState* state) const {
    *state = snapshot();
    return true;
  }

  ReaderState snapshot() const {
    ReaderState s;
    s.epoch = epoch_;
    s.file_position = file_position_;
    s.record_in_file = record_in_file_;
    s.rng = rng_.save();
    s.num_files = static_cast<int64_t>(files_.size());
    s.worker = options_.worker;
    s.num_workers = options_.num_workers;
    s.training = options_.training;
    if (batch_shuffle_) s.batch_rng = batch_rng_.save();
    s.shuffle_buffer.reserve(buffer_.size());
    for (const Example& e : buffer_) s.shuffle_buffer.push_back(e.address);
    for (const auto& bucket : buckets_)
      for (const Example& e : bucket) s.bucketed.push_back(e.address);
    for (const HeldBatch& b : batch_buffer_) {
      s.batch_buffer.insert(s.batch_buffer.end(), b.rows.begin(), b.rows.end());
      s.batch_buffer_rows.push_back(static_cast<int64_t>(b.rows.size()));
    }
    return s;
  }

 private:
  Rng first_batch_rng() const {
    return Rng(mix(options_.seed, 0xba7c4ULL + static_cast<uint64_t>(options_.worker)));
  }

  // A batch in the batch shuffle buffer, with the addresses of its rows.
  struct HeldBatch {
    Batch batch;
    std::vector<RecordAddress> rows;
  };

  // The next batch out of the buckets (before the batch shuffle), with its
  // rows' addresses when `rows` is given; false once an evaluation pass is
  // over.
  bool make_next(Batch* batch, std::vector<RecordAddress>* rows) {
    for (;;) {
      if (file_position_ < static_cast<int64_t>(order_.size())) {
        Example ex;
        if (read_example(&ex)) {
          if (shuffle_) {
            if (static_cast<int64_t>(buffer_.size()) < options_.shuffle_buffer) {
              buffer_.push_back(std::move(ex));
              continue;
            }
            std::swap(ex, buffer_[rng_.below(buffer_.size())]);
          }
          if (feed(std::move(ex), batch, rows)) return true;
        }
        continue;
      }
      // This epoch's files are read: empty the shuffle buffer at random.
      if (!buffer_.empty()) {
        size_t j = rng_.below(buffer_.size());
        Example ex = std::move(buffer_[j]);
        if (j + 1 != buffer_.size()) buffer_[j] = std::move(buffer_.back());
        buffer_.pop_back();
        if (feed(std::move(ex), batch, rows)) return true;
        continue;
      }
      if (options_.training) {
        if (fresh_epoch_ && kept_in_epoch_ == 0) throw no_data();
        start_epoch(epoch_ + 1);
        continue;
      }
      // End of an evaluation pass: what is left goes out bucket by bucket.
      for (size_t b = 0; b < buckets_.size(); ++b) {
        if (buckets_[b].empty()) continue;
        make_batch(&buckets_[b], batch, rows);
        return true;
      }
      return false;
    }
  }

  // The files this worker reads in `epoch`, as indices into files_:
  // shuffled afresh each training epoch from the seed, the worker and the
  // epoch alone, so that a restored reader finds the same order.
  std::vector<int64_t> epoch_order(int64_t epoch) const {
    std::vector<int64_t> order;
    const int64_t n = static_cast<int64_t>(files_.size());
    for (int64_t i = 0; i < n; ++i)
      if (record_sharding_ || i % options_.num_workers == options_.worker) order.push_back(i);
    if (options_.training) {
      Rng r(mix(mix(options_.seed, static_cast<uint64_t>(options_.worker)),
                static_cast<uint64_t>(epoch) + 1));
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[r.below(i)]);
    }
    return order;
  }

  void start_epoch(int64_t epoch) {
    epoch_ = epoch;
    order_ = epoch_order(epoch);
    file_position_ = 0;
    record_in_file_ = 0;
    reader_.reset();
    fresh_epoch_ = true;
    kept_in_epoch_ = 0;
  }

  Error no_data() const {
    std::string which = options_.num_workers > 1 ? " for worker " + std::to_string(options_.worker) +
                                                       " of " + std::to_string(options_.num_workers)
                                                 : std::string();
    return Error("no training example" + which + " in " + std::to_string(files_.size()) +
                 " file(s) starting with " + files_.front() + " has a length between " +
                 std::to_string(scheme_.min_length) + " and max_length " +
                 std::to_string(scheme_.max_length));
  }

  // The next example of this epoch's files that this worker keeps; false
  // when they are exhausted.
  bool read_example(Example* ex) {
    std::string record;
    while (file_position_ < static_cast<int64_t>(order_.size())) {
      const int64_t file = order_[static_cast<size_t>(file_position_)];
      if (!reader_) open(file, record_in_file_);
      const bool mine =
          !record_sharding_ || record_in_file_ % options_.num_workers == options_.worker;
      if (!(mine ? reader_->next(&record) : reader_->skip())) {
        reader_.reset();
        ++file_position_;
        record_in_file_ = 0;
        continue;
      }
      const RecordAddress address{file, record_in_file_++};
      if (!mine) continue;
      decode(record, address, ex);
      if (keep(*ex)) {
        ++kept_in_epoch_;
        return true;
      }
    }
    return false;
  }

  // Opens files_[file] and steps over its first `skip` records.
  void open(int64_t file, int64_t skip) {
    reader_ = std::make_unique<TFRecordReader>(files_[static_cast<size_t>(file)]);
    for (int64_t i = 0; i < skip; ++i)
      if (!reader_->skip())
        throw Error("reader state does not fit " + files_[static_cast<size_t>(file)] + ": it has " +
                    std::to_string(i) + " records, the state expects at least " +
                    std::to_string(skip));
  }

  void decode(const std::string& record, const RecordAddress& address, Example* ex) const {
    Int64Features f = parse_example(record);
    auto targets = f.find("targets");
    if (targets == f.end())
      throw Error("record " + std::to_string(address.record) + " of " +
                  files_[static_cast<size_t>(address.file)] + " has no 'targets' feature");
    ex->address = address;
    ex->targets = std::move(targets->second);
    auto inputs = f.find("inputs");
    ex->inputs = inputs == f.end() ? std::vector<int64_t>() : std::move(inputs->second);
    if (options_.reversed) std::swap(ex->inputs, ex->targets);
    auto cut = [](std::vector<int64_t>* v, int64_t n) {
      if (n > 0 && static_cast<int64_t>(v->size()) > n) v->resize(static_cast<size_t>(n));
    };
    cut(&ex->inputs, options_.max_input_seq_length);
    cut(&ex->targets, options_.max_target_seq_length);
    ex->length = static_cast<int64_t>(std::max(ex->inputs.size(), ex->targets.size()));
  }

  bool keep(const Example& ex) const {
    if (ex.length < scheme_.min_length) return false;
    const bool drop_long = options_.training || options_.eval_drop_long_sequences;
    return !(drop_long && ex.length > scheme_.max_length);
  }

  // Puts `ex` into its bucket; when that fills up, makes it into *batch.
  bool feed(Example&& ex, Batch* batch, std::vector<RecordAddress>* rows) {
    const size_t b = scheme_.bucket(ex.length);
    auto& bucket = buckets_[b];
    bucket.push_back(std::move(ex));
    if (static_cast<int64_t>(bucket.size()) < scheme_.batch_sizes[b]) return false;
    make_batch(&bucket, batch, rows);
    return true;
  }

  // Pads the examples of `bucket` into *batch, in order, and empties it;
  // their addresses go to `rows` when given.
  static void make_batch(std::vector<Example>* bucket, Batch* batch,
                         std::vector<RecordAddress>* rows) {
    const int64_t n = static_cast<int64_t>(bucket->size());
    size_t in_len = 0, out_len = 0;
    for (const Example& e : *bucket) {
      in_len = std::max(in_len, e.inputs.size());
      out_len = std::max(out_len, e.targets.size());
    }
    batch->inputs = at::zeros({n, static_cast<int64_t>(in_len)}, at::kLong);
    batch->targets = at::zeros({n, static_cast<int64_t>(out_len)}, at::kLong);
    int64_t* in = batch->inputs.data_ptr<int64_t>();
    int64_t* out = batch->targets.data_ptr<int64_t>();
    batch->input_tokens = batch->target_tokens = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Example& e = (*bucket)[static_cast<size_t>(i)];
      if (!e.inputs.empty())
        std::memcpy(in + i * in_len, e.inputs.data(), e.inputs.size() * sizeof(int64_t));
      if (!e.targets.empty())
        std::memcpy(out + i * out_len, e.targets.data(), e.targets.size() * sizeof(int64_t));
      batch->input_tokens += count_nonpad(e.inputs);
      batch->target_tokens += count_nonpad(e.targets);
    }
    if (rows) {
      rows->clear();
      for (const Example& e : *bucket) rows->push_back(e.address);
    }
    bucket->clear();
  }

  void restore(const ReaderState& s) {
    s.check_belongs_to(static_cast<int64_t>(files_.size()), options_.worker, options_.num_workers,
                       options_.training);
    rng_ = Rng::load(s.rng, "state");
    start_epoch(s.epoch);
    if (s.file_position < 0 || s.file_position > static_cast<int64_t>(order_.size()) ||
        s.record_in_file < 0)
      throw Error("reader state does not fit this reader: file_position " +
                  std::to_string(s.file_position) + " of " + std::to_string(order_.size()) +
                  " files, record_in_file " + std::to_string(s.record_in_file));
    file_position_ = s.file_position;
    record_in_file_ = s.record_in_file;
    fresh_epoch_ = file_position_ == 0 && record_in_file_ == 0;
    buffer_ = load(s.shuffle_buffer);
    for (Example& e : load(s.bucketed)) buckets_[scheme_.bucket(e.length)].push_back(std::move(e));
    for (size_t b = 0; b < buckets_.size(); ++b)
      if (static_cast<int64_t>(buckets_[b].size()) >= scheme_.batch_sizes[b])
        throw Error("reader state does not fit this reader: bucket " + std::to_string(b) +
                    " would hold a full batch; was it saved with another batching scheme?");
    restore_batch_buffer(s);
  }

  // The batch shuffle buffer of `s`, each batch rebuilt from its rows.
  void restore_batch_buffer(const ReaderState& s) {
    s.check_batch_rows();
    const int64_t held = static_cast<int64_t>(s.batch_buffer_rows.size());
    // A state from before the batch shuffle starts it afresh.
    if (batch_shuffle_)
      batch_rng_ = s.batch_rng.empty() ? first_batch_rng() : Rng::load(s.batch_rng, "state");
    const int64_t room = batch_shuffle_ ? options_.batch_shuffle : 0;
    if (held > room)
      throw Error("reader state does not fit this reader: it holds " + std::to_string(held) +
                  " batches for the batch shuffle, more than batch_shuffle_size=" +
                  std::to_string(room) + " allows; resume with the batch_shuffle_size it was "
                  "saved with");
    std::vector<Example> examples = load(s.batch_buffer);
    size_t next = 0;
    for (int64_t n : s.batch_buffer_rows) {
      std::vector<Example> rows(std::make_move_iterator(examples.begin() + next),
                                std::make_move_iterator(examples.begin() + next + n));
      next += static_cast<size_t>(n);
      HeldBatch b;
      make_batch(&rows, &b.batch, &b.rows);
      batch_buffer_.push_back(std::move(b));
    }
  }

  // Reads the examples at `addresses` (one pass over each file involved),
  // in the order given.
  std::vector<Example> load(const std::vector<RecordAddress>& addresses) const {
    std::vector<Example> out(addresses.size());
    std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> by_file;
    for (size_t i = 0; i < addresses.size(); ++i) {
      const RecordAddress& a = addresses[i];
      if (a.file < 0 || a.file >= static_cast<int64_t>(files_.size()) || a.record < 0)
        throw Error("reader state does not fit this reader: record address " +
                    std::to_string(a.file) + ":" + std::to_string(a.record) + " with " +
                    std::to_string(files_.size()) + " files");
      by_file[a.file].push_back({a.record, i});
    }
    std::string record;
    for (auto& [file, wanted] : by_file) {
      std::sort(wanted.begin(), wanted.end());
      const std::string& path = files_[static_cast<size_t>(file)];
      TFRecordReader reader(path);
      int64_t read = 0;  // records consumed; `record` holds number read - 1
      for (const auto& [index, slot] : wanted) {
        // The same record can wait twice (copies from two epochs).
        if (read == 0 || index != read - 1) {
          bool ok = true;
          for (; ok && read < index; ++read) ok = reader.skip();
          if (!ok || !reader.next(&record))
            throw Error("reader state does not fit " + path + ": it has no record " +
                        std::to_string(index));
          ++read;
        }
        decode(record, addresses[slot], &out[slot]);
      }
    }
    return out;
  }

  const std::vector<std::string>& files_;
  const BatchingScheme& scheme_;
  const ReaderOptions& options_;
  bool record_sharding_ = false;
  bool shuffle_ = false;
  bool batch_shuffle_ = false;

  Rng rng_;
  Rng batch_rng_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
  int64_t file_position_ = 0;
  int64_t record_in_file_ = 0;
  std::unique_ptr<TFRecordReader> reader_;
  bool fresh_epoch_ = true;  // started at its beginning, not restored mid-way
  int64_t kept_in_epoch_ = 0;
  std::vector<Example> buffer_;
  std::vector<std::vector<Example>> buckets_;
  std::vector<HeldBatch> batch_buffer_;
};

// ---------------------------------------------------------------------------
// The reader: a background thread running the producer into a bounded queue.

BatchReader::BatchReader(std::vector<std::string> files, BatchingScheme scheme,
                         ReaderOptions options, std::optional<ReaderState> resume)
    : files_(std::move(files)), scheme_(std::move(scheme)), options_(options) {
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
  producer_ = std::make_unique<Producer>(files_, scheme_, options_, resume ? &*resume : nullptr);
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
