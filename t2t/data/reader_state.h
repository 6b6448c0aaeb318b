// The batch reader's saved position (BatchReader::state()), its YAML form
// stored with a checkpoint, and the checks a reader makes before resuming
// from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t2t {

// Where a record lives: its file's index in the reader's file list and its
// index in that file.
struct RecordAddress {
  int64_t file = 0;
  int64_t record = 0;
  bool operator==(const RecordAddress& o) const { return file == o.file && record == o.record; }
};

// Where one part of a data mix (data_mix.h) stands, and what it was.
struct MixPosition {
  std::string part;
  double weight = 1;
  int64_t num_files = 0;
  int64_t epoch = 0;
  int64_t file_position = 0;
  int64_t record_in_file = 0;
  int64_t taken = 0;  // examples the mix has drawn from it
};

// Everything that decides a reader's future batches, taken right after a
// batch was produced. A reader constructed from this state, over the same
// unchanged files in the same order with the same scheme and options
// (prefetch aside), produces exactly the batches the reader it was taken
// from produces after that batch: the same examples in the same rows, in
// the same order, for ever after (and so the same epoch count). Examples
// waiting in the shuffle buffer and in the buckets are kept as addresses
// and read again on restore, so the state stays small (at most the buffer
// plus the buckets' capacity in addresses, a few tens of KB for batch_size
// 4096) and restoring reads only those records and steps over the start of
// the current file; nothing is replayed.
struct ReaderState {
  int64_t epoch = 0;           // complete passes over this worker's data
  int64_t file_position = 0;   // index into this epoch's (shuffled) file order
  int64_t record_in_file = 0;  // records of that file read or skipped so far
  std::string rng;             // the shuffle generator's state; empty: unseeded
  std::vector<RecordAddress> shuffle_buffer;  // slot by slot
  std::vector<RecordAddress> bucketed;        // bucket by bucket, oldest first
  // The batch shuffle's generator (empty: no batch shuffle) and buffer,
  // slot by slot: each batch's rows in order, and how many rows each has.
  std::string batch_rng;
  std::vector<RecordAddress> batch_buffer;
  std::vector<int64_t> batch_buffer_rows;
  // A reader of a data mix: each part's position (the three above are
  // then unused, epoch aside: the passes over every part). Empty otherwise.
  std::vector<MixPosition> mix;
  // What the state belongs to, checked on restore.
  int64_t num_files = 0;
  int64_t worker = 0;
  int64_t num_workers = 1;
  bool training = true;

  // A YAML mapping; from_yaml() throws t2t::Error naming `source` on text
  // that is not one.
  std::string to_yaml() const;
  static ReaderState from_yaml(const std::string& yaml, const std::string& source);

  // Throw t2t::Error saying what does not fit: a state taken by another
  // reader (other files, worker or mode), or held batches whose row counts
  // do not match their addresses.
  void check_belongs_to(int64_t reader_files, int64_t reader_worker, int64_t reader_workers,
                        bool reader_training) const;
  void check_batch_rows() const;
};

}  // namespace t2t
