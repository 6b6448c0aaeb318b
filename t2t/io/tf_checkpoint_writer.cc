#include "t2t/io/tf_checkpoint_writer.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/io/crc32c.h"
#include "t2t/io/sstable.h"

namespace t2t {

namespace {

namespace fs = std::filesystem;

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A protocol-buffer field's tag: (number << 3) | wire type.
void put_tag(std::string* out, int field, int wire_type) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}

void put_bytes_field(std::string* out, int field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  *out += bytes;
}

int64_t dtype_bytes(TFDType dtype) {
  switch (dtype) {
    case TFDType::kDouble:
    case TFDType::kInt64: return 8;
    case TFDType::kFloat:
    case TFDType::kInt32: return 4;
    case TFDType::kBFloat16:
    case TFDType::kHalf:
    case TFDType::kInt16: return 2;
    case TFDType::kInt8:
    case TFDType::kUInt8:
    case TFDType::kBool: return 1;
    default: return 0;
  }
}

// TensorFlow's BundleHeaderProto: num_shards = 1, endianness = 2 (0,
// little, left as the default), version = 3 (VersionDef: producer = 1).
std::string bundle_header() {
  std::string header, version;
  put_tag(&header, 1, 0);
  put_varint(&header, 1);
  put_tag(&version, 1, 0);
  put_varint(&version, 1);
  put_bytes_field(&header, 3, version);
  return header;
}

}  // namespace

TFCheckpointWriter::TFCheckpointWriter(std::string prefix)
    : prefix_(std::move(prefix)),
      data_path_(prefix_ + ".data-00000-of-00001"),
      data_temp_(temp_path_for(data_path_)) {
  const fs::path dir = fs::path(prefix_).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  data_.open(data_temp_, std::ios::binary | std::ios::trunc);
  if (!data_) throw Error("cannot write the checkpoint data file '" + data_temp_ + "'");
}

TFCheckpointWriter::~TFCheckpointWriter() {
  if (!finished_) {
    data_.close();
    std::remove(data_temp_.c_str());
  }
}

void TFCheckpointWriter::add(const std::string& name, TFDType dtype,
                             const std::vector<int64_t>& shape, const std::string& bytes) {
  const std::string where = "checkpoint " + prefix_ + ", tensor '" + name + "'";
  if (finished_) throw Error(where + ": the checkpoint is finished already");
  if (name.empty()) throw Error("checkpoint " + prefix_ + ": a tensor needs a name");
  if (entries_.count(name)) throw Error(where + " is added twice");
  const int64_t width = dtype_bytes(dtype);
  if (width == 0)
    throw Error(where + ": dtype " + tf_dtype_name(static_cast<int>(dtype)) + " is not written");
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(where + ": negative dimension " + std::to_string(d));
    elements *= d;
  }
  if (static_cast<int64_t>(bytes.size()) != elements * width)
    throw Error(where + ": " + std::to_string(bytes.size()) + " bytes for " +
                std::to_string(elements) + " elements of " +
                tf_dtype_name(static_cast<int>(dtype)));
  data_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!data_) throw Error("cannot write '" + data_temp_ + "' (disk full?)");

  // BundleEntryProto: dtype = 1, shape = 2 (TensorShapeProto: dim = 2,
  // each Dim: size = 1), shard_id = 3 (0, left out), offset = 4, size = 5,
  // crc32c = 6 (fixed32, masked as TFRecord's).
  std::string entry, shape_proto;
  put_tag(&entry, 1, 0);
  put_varint(&entry, static_cast<uint64_t>(dtype));
  for (int64_t d : shape) {
    std::string dim;
    put_tag(&dim, 1, 0);
    put_varint(&dim, static_cast<uint64_t>(d));
    put_bytes_field(&shape_proto, 2, dim);
  }
  put_bytes_field(&entry, 2, shape_proto);
  put_tag(&entry, 4, 0);
  put_varint(&entry, static_cast<uint64_t>(offset_));
  put_tag(&entry, 5, 0);
  put_varint(&entry, bytes.size());
  put_tag(&entry, 6, 5);
  const uint32_t crc = mask_crc32c(crc32c(bytes));
  for (int i = 0; i < 4; ++i) entry.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  entries_.emplace(name, std::move(entry));
  offset_ += static_cast<int64_t>(bytes.size());
}

void TFCheckpointWriter::add_floats(const std::string& name, const std::vector<int64_t>& shape,
                                    const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  add(name, TFDType::kFloat, shape, bytes);
}

void TFCheckpointWriter::add_int64s(const std::string& name, const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& values) {
  std::string bytes(values.size() * sizeof(int64_t), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  add(name, TFDType::kInt64, shape, bytes);
}

void TFCheckpointWriter::finish() {
  if (finished_) return;
  data_.close();
  if (!data_) throw Error("cannot write '" + data_temp_ + "' (disk full?)");
  // The header's key "" sorts before every tensor's name.
  std::vector<std::pair<std::string, std::string>> table;
  table.reserve(entries_.size() + 1);
  table.emplace_back("", bundle_header());
  for (auto& [name, entry] : entries_) table.emplace_back(name, std::move(entry));
  std::error_code ec;
  fs::rename(data_temp_, data_path_, ec);
  if (ec) throw Error("cannot rename '" + data_temp_ + "' to '" + data_path_ + "': " + ec.message());
  write_file_atomic(prefix_ + ".index", make_sstable(table));
  finished_ = true;
}

void write_tf_checkpoint_state(const std::string& dir, const std::string& newest,
                               const std::vector<std::string>& all) {
  // A text CheckpointState proto; the names are file names, relative to dir.
  std::string text = "model_checkpoint_path: \"" + newest + "\"\n";
  for (const std::string& name : all) text += "all_model_checkpoint_paths: \"" + name + "\"\n";
  write_file_atomic((fs::path(dir) / "checkpoint").string(), text);
}

}  // namespace t2t
