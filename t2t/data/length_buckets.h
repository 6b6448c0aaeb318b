// Grouping examples by length into batches (T2T's
// bucket_by_sequence_length): each example joins the bucket of its length,
// and a bucket becomes a padded batch as soon as it holds its batch size.
#pragma once

#include <vector>

#include "t2t/data/example_source.h"
#include "t2t/data/reader_state.h"

namespace t2t {

struct Batch;
struct BatchingScheme;

// Pads `examples` into *batch, one row each in order, and empties them;
// their addresses go to *rows when given.
void pad_batch(std::vector<DecodedExample>* examples, Batch* batch,
               std::vector<RecordAddress>* rows);

class LengthBuckets {
 public:
  // Keeps a reference to `scheme`, which must outlive it.
  explicit LengthBuckets(const BatchingScheme& scheme);

  // Puts `ex` into its bucket; when that is full, pads it into *batch
  // (addresses to *rows when given) and returns true.
  bool add(DecodedExample&& ex, Batch* batch, std::vector<RecordAddress>* rows);
  // Pads the first bucket that holds anything into *batch, as at the end
  // of an evaluation pass; false when all are empty.
  bool flush(Batch* batch, std::vector<RecordAddress>* rows);

  // The waiting examples' addresses, bucket by bucket, oldest first.
  void append_addresses(std::vector<RecordAddress>* out) const;
  // Puts restored examples back into their buckets. Throws t2t::Error when
  // one would then hold a full batch: the state was saved with another
  // scheme.
  void restore(std::vector<DecodedExample> examples);

 private:
  const BatchingScheme& scheme_;
  std::vector<std::vector<DecodedExample>> buckets_;
};

}  // namespace t2t
