// The batch reader's stream of examples: this worker's share of the files,
// in an order shuffled afresh each training epoch, decoded, cut to the
// configured lengths and filtered by length. It also reads single records
// again by address, which is how a saved reader state restores the
// examples that were waiting in buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "t2t/data/reader_state.h"

namespace t2t {

struct BatchingScheme;
struct ReaderOptions;
class TFRecordReader;

// An example as the model will see it: inputs and targets after reversal
// and cutting, and where it was read.
struct DecodedExample {
  RecordAddress address;
  std::vector<int64_t> inputs;
  std::vector<int64_t> targets;
  int64_t length = 0;  // the longer of inputs and targets
  // The "alignment" feature (alignment_feature.h) turned to the model's
  // direction: input position, target position, ...; links cut off with
  // their tokens are gone. `aligned`: the record has the feature.
  bool aligned = false;
  std::vector<int64_t> alignment;
};

// What the batch reader draws examples from: one ExampleSource, or a mix of
// them (example_mix.h).
class ExampleStream {
 public:
  virtual ~ExampleStream() = default;
  // The next example; false when this epoch's files are read.
  virtual bool next(DecodedExample* ex) = 0;
  virtual bool epoch_read() const = 0;
  virtual void next_epoch() = 0;
  // Complete passes over the data.
  virtual int64_t epoch() const = 0;
  // The position, into or out of `state`'s fields for it.
  virtual void save(ReaderState* state) const = 0;
  virtual void restore(const ReaderState& state) = 0;
  // The examples at `addresses`, in the order given, whether kept or not.
  virtual std::vector<DecodedExample> load(const std::vector<RecordAddress>& addresses) const = 0;
};

class ExampleSource : public ExampleStream {
 public:
  // Keeps references to its arguments, which must outlive it; starts at
  // the beginning of epoch 0.
  ExampleSource(const std::vector<std::string>& files, const BatchingScheme& scheme,
                const ReaderOptions& options);
  ~ExampleSource() override;

  ExampleSource(const ExampleSource&) = delete;
  ExampleSource& operator=(const ExampleSource&) = delete;

  // The next example of this epoch that this worker keeps; false when the
  // epoch's files are read.
  bool next(DecodedExample* ex) override;
  bool epoch_read() const override;

  // Starts the next epoch. Throws t2t::Error when the epoch just read
  // started at its beginning and kept no example: training would wait for
  // ever.
  void next_epoch() override;

  // Resumes in `epoch` at record `record_in_file` of the file at
  // `file_position` in its order; throws t2t::Error when the position is
  // outside the epoch's files (a record past a file's end is found when
  // reading it).
  void seek(int64_t epoch, int64_t file_position, int64_t record_in_file);

  // The examples at `addresses`, in the order given, whether kept or not;
  // each file involved is read once.
  std::vector<DecodedExample> load(const std::vector<RecordAddress>& addresses) const override;

  // epoch, file_position and record_in_file.
  void save(ReaderState* state) const override;
  void restore(const ReaderState& state) override;

  int64_t epoch() const override { return epoch_; }
  int64_t file_position() const { return file_position_; }
  int64_t record_in_file() const { return record_in_file_; }

 private:
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  void start_epoch(int64_t epoch);
  void open(int64_t file, int64_t skip);
  void decode(const std::string& record, const RecordAddress& address, DecodedExample* ex) const;
  bool keep(const DecodedExample& ex) const;

  const std::vector<std::string>& files_;
  const BatchingScheme& scheme_;
  const ReaderOptions& options_;
  // Fewer files than workers: each worker reads its share of every file's
  // records instead of its share of the files.
  bool record_sharding_ = false;

  int64_t epoch_ = 0;
  std::vector<int64_t> order_;  // this epoch's files, as indices into files_
  int64_t file_position_ = 0;
  int64_t record_in_file_ = 0;
  std::unique_ptr<TFRecordReader> reader_;
  bool fresh_epoch_ = true;  // started at its beginning, not restored mid-way
  int64_t kept_in_epoch_ = 0;
};

}  // namespace t2t
