// A reader of TensorFlow checkpoints (tensor bundle V2: `<prefix>.index` and
// `<prefix>.data-0000K-of-0000M`) without TensorFlow or protobuf: the index
// is a LevelDB table (sstable.h) of hand-parsed protos, the shards plain
// little-endian tensor bytes. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace t2t {

// TensorFlow DataType enum values as stored in checkpoints.
enum class TFDType : int {
  kFloat = 1,
  kDouble = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kInt64 = 9,
  kBool = 10,
  kBFloat16 = 14,
  kHalf = 19
};

// "float32", "bfloat16", ... as numpy and TF name them, or "DataType 23"
// for a value this reader does not know.
std::string tf_dtype_name(int dtype);

// One tensor's BundleEntryProto: where its bytes are and what they hold.
struct TFTensorEntry {
  std::string name;
  int dtype = 0;  // TF DataType value
  std::vector<int64_t> shape;
  int32_t shard_id = 0;
  int64_t offset = 0, size = 0;  // bytes in the data shard
  uint32_t crc32c = 0;           // as stored (masked)
  bool sliced = false;           // a partitioned variable's entry (has slices)
  int64_t num_elements() const;
};

class TFCheckpointReader {
 public:
  // prefix: the path without ".index", e.g. ".../model.ckpt-100". Reads and
  // checks the index and that every data shard exists. Throws t2t::Error
  // naming the file.
  explicit TFCheckpointReader(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  // Sorted; the bundle header's entry ("") is not a tensor and is left out.
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Throws naming the variable and the file, suggesting close names.
  const TFTensorEntry& entry(const std::string& name) const;

  // The tensor's bytes, CRC-32C verified. Refuses partitioned (sliced)
  // variables and strings.
  std::string read_bytes(const std::string& name) const;
  // float32, float64, bfloat16 and float16 tensors as float32, row-major.
  std::vector<float> read_floats(const std::string& name) const;
  // Integer and bool tensors as int64.
  std::vector<int64_t> read_ints(const std::string& name) const;
  // A one-element integer tensor, e.g. "global_step".
  int64_t read_scalar_int(const std::string& name) const;

  // The path of data shard `shard_id`: "<prefix>.data-%05d-of-%05d".
  std::string shard_path(int32_t shard_id) const;

 private:
  std::string checked_bytes(const TFTensorEntry& e, const char* wanted) const;

  std::string prefix_;
  int32_t num_shards_ = 1;
  std::vector<std::string> names_;
  std::unordered_map<std::string, TFTensorEntry> entries_;
};

// A prefix ("dir/model.ckpt-100") as is; for a directory, the checkpoint
// its `checkpoint` file names (a vanished absolute path is looked for by
// basename in the directory, since runs are moved), else its newest
// model.ckpt-N.index. "" for a directory without one; throws t2t::Error
// when the `checkpoint` file names a missing one.
std::string find_tf_checkpoint(const std::string& path);

// (N, prefix) of `dir`'s model.ckpt-N.index files, oldest first.
std::vector<std::pair<int64_t, std::string>> list_tf_checkpoints(const std::string& dir);

// True when `prefix + ".index"` exists.
bool is_tf_checkpoint(const std::string& prefix);

}  // namespace t2t
