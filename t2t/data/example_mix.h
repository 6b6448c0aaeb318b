// A training reader's examples drawn from the parts of a data mix
// (data_mix.h): one ExampleSource per part, each going round its own files
// epoch after epoch, and a MixSchedule picking which gives the next
// example. Record addresses count files across the parts in order, so the
// reader's buffers and states hold them as they hold a single source's.
#pragma once

#include <memory>
#include <vector>

#include "t2t/data/batch_reader.h"
#include "t2t/data/data_mix.h"
#include "t2t/data/example_source.h"

namespace t2t {

class MixedExamples : public ExampleStream {
 public:
  // Keeps references to `mix` and `scheme`, which must outlive it. Training
  // only: an evaluation pass reads one split. Each part shuffles its files
  // with a seed of its own, drawn from options.seed.
  MixedExamples(const DataMix& mix, const BatchingScheme& scheme, const ReaderOptions& options);
  ~MixedExamples() override;

  // Never false: a part whose epoch is read starts its next one.
  bool next(DecodedExample* ex) override;
  bool epoch_read() const override { return false; }
  void next_epoch() override {}
  // Passes over every part: the fewest any part has made.
  int64_t epoch() const override;
  void save(ReaderState* state) const override;
  // Throws t2t::Error when `state` was saved with other parts, files or
  // weights, naming both mixes.
  void restore(const ReaderState& state) override;
  std::vector<DecodedExample> load(const std::vector<RecordAddress>& addresses) const override;

 private:
  // The part holding the file of this global index, and its first file's.
  size_t part_of(int64_t file) const;

  const DataMix& mix_;
  std::vector<ReaderOptions> options_;  // per part: its own seed
  std::vector<std::unique_ptr<ExampleSource>> parts_;
  std::vector<int64_t> first_file_;  // per part, the global index of its first file
  MixSchedule schedule_;
};

}  // namespace t2t
