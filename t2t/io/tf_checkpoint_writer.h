// A writer of TensorFlow checkpoints (tensor bundle V2, one data shard).
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

  // One tensor as row-major little-endian bytes. Throws t2t::Error for a
  // repeated or empty name, a wrong size, or an unsupported dtype.
  void add(const std::string& name, TFDType dtype, const std::vector<int64_t>& shape,
           const std::string& bytes);
  void add_floats(const std::string& name, const std::vector<int64_t>& shape,
                  const std::vector<float>& values);
  void add_int64s(const std::string& name, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& values);

  // Writes the index and renames both files into place, the index last.
  // Throws t2t::Error naming the file on a write error.
  void finish();

 private:
  std::string prefix_, data_path_, data_temp_;
  std::ofstream data_;
  int64_t offset_ = 0;
  std::map<std::string, std::string> entries_;  // name -> BundleEntryProto
  bool finished_ = false;
};

// Writes TensorFlow's <dir>/checkpoint: `newest` ("model.ckpt-100") to load,
// `all` (oldest first) kept.
void write_tf_checkpoint_state(const std::string& dir, const std::string& newest,
                               const std::vector<std::string>& all);

}  // namespace t2t
