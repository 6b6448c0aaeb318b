// A reader of TensorFlow checkpoints (tensor bundle V2: `<prefix>.index` and
// `<prefix>.data-0000K-of-0000M`), so that runs of TensorFlow's Tensor2Tensor
// can be loaded without TensorFlow or a protobuf run-time library: the index
// is a LevelDB-format table (t2t/io/sstable.h) of hand-parsed protos, the
// data shards plain little-endian tensor bytes. Plain std types only, so
// that tools that merely list a checkpoint need not include LibTorch.
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
  // checks the index (block CRCs, footer magic, header: num_shards,
  // little-endian) and that every data shard exists. Throws t2t::Error
  // naming the file.
  explicit TFCheckpointReader(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  // Sorted; the bundle header's entry ("") is not a tensor and is left out.
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Throws naming the variable and the file, suggesting close names.
  const TFTensorEntry& entry(const std::string& name) const;

  // The tensor's bytes from its data shard, CRC-32C verified. Refuses
  // partitioned (sliced) variables and strings, whose bytes are not the
  // plain array.
  std::string read_bytes(const std::string& name) const;
  // float32, float64, bfloat16 and float16 tensors as float32, row-major.
  std::vector<float> read_floats(const std::string& name) const;
  // int32 and int64 tensors (and the narrower int8, uint8, int16 and bool)
  // as int64.
  std::vector<int64_t> read_ints(const std::string& name) const;
  // A one-element integer tensor, e.g. "global_step".
  int64_t read_scalar_int(const std::string& name) const;

  // The path of data shard `shard_id`: "<prefix>.data-%05d-of-%05d".
  std::string shard_path(int32_t shard_id) const;

 private:
  // The bytes checked against the entry's dtype, shape and size.
  std::string checked_bytes(const TFTensorEntry& e, const char* wanted) const;

  std::string prefix_;
  int32_t num_shards_ = 1;
  std::vector<std::string> names_;
  std::unordered_map<std::string, TFTensorEntry> entries_;
};

// The checkpoint named by the user: a prefix ("dir/model.ckpt-100"), or a
// directory. For a directory, the checkpoint its `checkpoint` file names
// (`model_checkpoint_path: "..."`; relative to the directory, and an absolute
// path that no longer exists is looked for in the directory by its basename,
// since runs are moved), else its newest `model.ckpt-N.index` by N. Returns
// "" for a directory without a TF checkpoint; throws t2t::Error when its
// `checkpoint` file names a missing one.
std::string find_tf_checkpoint(const std::string& path);

// The TensorFlow checkpoints of `dir` named as T2T names them
// (model.ckpt-N.index), oldest first: (N, prefix) pairs.
std::vector<std::pair<int64_t, std::string>> list_tf_checkpoints(const std::string& dir);

// True when `prefix + ".index"` exists.
bool is_tf_checkpoint(const std::string& prefix);

}  // namespace t2t
