// A writer of TensorFlow checkpoints (tensor bundle V2, one data shard), so
// that what t2t makes from T2T's checkpoints (an average, say) is again a
// checkpoint that T2T, TensorFlow and t2t's reader (tf_checkpoint.h) load.
// Plain std types, like the reader.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "t2t/io/tf_checkpoint.h"

namespace t2t {

class TFCheckpointWriter {
 public:
  // prefix: the path without ".index", e.g. ".../model.ckpt-100". The data
  // shard is written as tensors are added, under a temporary name.
  explicit TFCheckpointWriter(std::string prefix);
  ~TFCheckpointWriter();
  TFCheckpointWriter(const TFCheckpointWriter&) = delete;
  TFCheckpointWriter& operator=(const TFCheckpointWriter&) = delete;

  // One tensor: its TF dtype, shape and row-major little-endian bytes (as
  // many as the shape and dtype need). Throws t2t::Error for a name added
  // twice, an empty name, a size that does not fit, or a dtype other than
  // float32, float64, bfloat16, float16, int8-int64 and bool.
  void add(const std::string& name, TFDType dtype, const std::vector<int64_t>& shape,
           const std::string& bytes);
  void add_floats(const std::string& name, const std::vector<int64_t>& shape,
                  const std::vector<float>& values);
  void add_int64s(const std::string& name, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& values);

  // Writes the index and renames both files into place, the index last, so
  // that a reader never finds an index without its data. Throws t2t::Error
  // naming the file on a write error.
  void finish();

 private:
  std::string prefix_, data_path_, data_temp_;
  std::ofstream data_;
  int64_t offset_ = 0;
  std::map<std::string, std::string> entries_;  // name -> BundleEntryProto
  bool finished_ = false;
};

// Writes <dir>/checkpoint, TensorFlow's record of a directory's checkpoints,
// naming `newest` (a prefix's file name, "model.ckpt-100") as the one to
// load and `all` (oldest first) as those kept.
void write_tf_checkpoint_state(const std::string& dir, const std::string& newest,
                               const std::vector<std::string>& all);

}  // namespace t2t
