#include "t2t/io/tf_checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/io/crc32c.h"
#include "t2t/io/sstable.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

// A reader of protocol-buffer wire format over one message's bytes, by hand
// for the same reason as t2t/io/example.cc's: no protobuf run-time library.
// `bad` carries the file (and key) being parsed into every error.
class Wire {
 public:
  Wire(std::string_view data, const std::string& where) : s_(data), where_(where) {}
  bool done() const { return s_.empty(); }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (s_.empty()) bad("a varint runs past the end");
      const uint8_t byte = static_cast<uint8_t>(s_.front());
      s_.remove_prefix(1);
      if (shift == 63 && byte > 1) bad("a varint overflows 64 bits");
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    bad("a varint is longer than ten bytes");
  }

  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > s_.size()) bad("a field's length runs past the end");
    std::string_view out = s_.substr(0, n);
    s_.remove_prefix(n);
    return out;
  }

  uint32_t fixed32() {
    if (s_.size() < 4) bad("a fixed32 field runs past the end");
    const auto* b = reinterpret_cast<const uint8_t*>(s_.data());
    s_.remove_prefix(4);
    return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
           static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
  }

  // The next field's (number, wire type).
  std::pair<uint64_t, uint32_t> tag() {
    const uint64_t t = varint();
    if ((t >> 3) == 0) bad("a field has number 0");
    return {t >> 3, static_cast<uint32_t>(t & 7)};
  }

  // Checks that field `field` came with the wire type its schema gives.
  void expect(uint64_t field, uint32_t got, uint32_t want) {
    if (got != want)
      bad("field " + std::to_string(field) + " has wire type " + std::to_string(got) +
          ", not " + std::to_string(want));
  }

  void skip(uint32_t wire_type) {
    switch (wire_type) {
      case 0: varint(); return;
      case 1: advance(8); return;
      case 2: bytes(); return;
      case 5: advance(4); return;
      default: bad("unsupported wire type " + std::to_string(wire_type));
    }
  }

  [[noreturn]] void bad(const std::string& what) const {
    throw Error("cannot read the TensorFlow checkpoint index '" + where_ + ": " + what +
                ". The file is damaged or is not a checkpoint index");
  }

 private:
  void advance(size_t n) {
    if (n > s_.size()) bad("a fixed-size field runs past the end");
    s_.remove_prefix(n);
  }
  std::string_view s_;
  const std::string& where_;
};

constexpr int kEndiannessLittle = 0;
// Shard files are numbered %05d; more than this is damage, not a checkpoint.
constexpr int64_t kMaxShards = 100000;

// TensorShapeProto: repeated dim = 2 {size = 1, name = 2}, unknown_rank = 3.
std::vector<int64_t> parse_shape(std::string_view data, const std::string& where) {
  Wire w(data, where);
  std::vector<int64_t> dims;
  while (!w.done()) {
    const auto [field, type] = w.tag();
    if (field == 2) {
      w.expect(field, type, 2);
      Wire dim(w.bytes(), where);
      int64_t size = 0;
      while (!dim.done()) {
        const auto [f, t] = dim.tag();
        if (f == 1) {
          dim.expect(f, t, 0);
          size = static_cast<int64_t>(dim.varint());
        } else {
          dim.skip(t);
        }
      }
      if (size < 0) w.bad("a dimension is " + std::to_string(size));
      dims.push_back(size);
    } else if (field == 3) {
      w.expect(field, type, 0);
      if (w.varint() != 0) w.bad("the shape's rank is unknown, which a saved tensor cannot have");
    } else {
      w.skip(type);
    }
  }
  return dims;
}

// BundleEntryProto: dtype = 1, shape = 2, shard_id = 3, offset = 4,
// size = 5, crc32c = 6 (fixed32), slices = 7.
TFTensorEntry parse_entry(std::string_view key, std::string_view data, const std::string& where) {
  Wire w(data, where);
  TFTensorEntry e;
  e.name.assign(key);
  while (!w.done()) {
    const auto [field, type] = w.tag();
    switch (field) {
      case 1: w.expect(field, type, 0); e.dtype = static_cast<int>(w.varint()); break;
      case 2: w.expect(field, type, 2); e.shape = parse_shape(w.bytes(), where); break;
      case 3: w.expect(field, type, 0); e.shard_id = static_cast<int32_t>(w.varint()); break;
      case 4: w.expect(field, type, 0); e.offset = static_cast<int64_t>(w.varint()); break;
      case 5: w.expect(field, type, 0); e.size = static_cast<int64_t>(w.varint()); break;
      case 6: w.expect(field, type, 5); e.crc32c = w.fixed32(); break;
      case 7: w.expect(field, type, 2); w.bytes(); e.sliced = true; break;
      default: w.skip(type);
    }
  }
  if (e.offset < 0 || e.size < 0) w.bad("a negative offset or size");
  if (e.num_elements() < 0) w.bad("its shape has too many elements");
  return e;
}

// Bytes per element of the fixed-size dtypes; 0 for strings and the unknown.
int64_t element_size(int dtype) {
  switch (static_cast<TFDType>(dtype)) {
    case TFDType::kUInt8: case TFDType::kInt8: case TFDType::kBool: return 1;
    case TFDType::kInt16: case TFDType::kBFloat16: case TFDType::kHalf: return 2;
    case TFDType::kFloat: case TFDType::kInt32: return 4;
    case TFDType::kDouble: case TFDType::kInt64: return 8;
    default: return 0;
  }
}

template <typename T>
T load(const char* p) {
  // The shard is little-endian like the machines t2t runs on (the header
  // check refuses big-endian bundles).
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// IEEE binary16 to binary32, subnormals, infinities and NaNs included.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_to_float(sign);
    exp = 127 - 15 + 1;  // normalize the subnormal
    while (!(mant & 0x400)) {
      mant <<= 1;
      --exp;
    }
    return bits_to_float(sign | (exp << 23) | ((mant & 0x3ff) << 13));
  }
  return bits_to_float(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

}  // namespace

std::string tf_dtype_name(int dtype) {
  switch (static_cast<TFDType>(dtype)) {
    case TFDType::kFloat: return "float32";
    case TFDType::kDouble: return "float64";
    case TFDType::kInt32: return "int32";
    case TFDType::kUInt8: return "uint8";
    case TFDType::kInt16: return "int16";
    case TFDType::kInt8: return "int8";
    case TFDType::kString: return "string";
    case TFDType::kInt64: return "int64";
    case TFDType::kBool: return "bool";
    case TFDType::kBFloat16: return "bfloat16";
    case TFDType::kHalf: return "float16";
  }
  return "DataType " + std::to_string(dtype);
}

// -1 when the product overflows, which parse_entry refuses.
int64_t TFTensorEntry::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

TFCheckpointReader::TFCheckpointReader(const std::string& prefix) : prefix_(prefix) {
  const std::string index_path = prefix + ".index";
  if (!is_tf_checkpoint(prefix))
    throw Error("no TensorFlow checkpoint at '" + prefix + "': '" + index_path +
                "' does not exist. Name a checkpoint by its prefix (without .index), e.g. "
                "'dir/model.ckpt-1000', or its directory");
  const std::string index = read_file(index_path);
  bool have_header = false;
  for_each_sstable_entry(index, index_path, [&](std::string_view key, std::string_view value) {
    const std::string where = index_path + "' (entry '" + std::string(key) + "')";
    if (key.empty()) {
      // BundleHeaderProto: num_shards = 1, endianness = 2, version = 3.
      Wire w(value, where);
      int64_t num_shards = 0, endianness = kEndiannessLittle;
      while (!w.done()) {
        const auto [field, type] = w.tag();
        if (field == 1) {
          w.expect(field, type, 0);
          num_shards = static_cast<int64_t>(w.varint());
        } else if (field == 2) {
          w.expect(field, type, 0);
          endianness = static_cast<int64_t>(w.varint());
        } else {
          w.skip(type);
        }
      }
      if (endianness != kEndiannessLittle)
        throw Error("the TensorFlow checkpoint '" + index_path +
                    "' was written on a big-endian machine; t2t reads little-endian ones only. "
                    "Load and save it again with TensorFlow on a little-endian machine");
      if (num_shards < 1 || num_shards > kMaxShards)
        w.bad("the header gives " + std::to_string(num_shards) + " data shards");
      num_shards_ = static_cast<int32_t>(num_shards);
      have_header = true;
      return;
    }
    if (!have_header) Wire(value, where).bad("the bundle header is missing");
    TFTensorEntry e = parse_entry(key, value, where);
    if (e.shard_id < 0 || e.shard_id >= num_shards_)
      Wire(value, where).bad("shard " + std::to_string(e.shard_id) + " of " +
                             std::to_string(num_shards_));
    names_.push_back(e.name);
    entries_.emplace(e.name, std::move(e));
  });
  if (!have_header)
    throw Error("cannot read the TensorFlow checkpoint index '" + index_path +
                "': it holds no bundle header. The file is damaged or is not a checkpoint index");
  // Keys come sorted (the table checks that they increase), so names_ is.
  for (int32_t shard = 0; shard < num_shards_; ++shard) {
    const std::string path = shard_path(shard);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      throw Error("the TensorFlow checkpoint '" + prefix + "' lacks its data shard '" + path +
                  "' (" + std::to_string(num_shards_) +
                  " shards): copy every file of the checkpoint, not only its .index");
  }
}

std::string TFCheckpointReader::shard_path(int32_t shard_id) const {
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", static_cast<int>(shard_id),
                static_cast<int>(num_shards_));
  return prefix_ + suffix;
}

const TFTensorEntry& TFCheckpointReader::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it != entries_.end()) return it->second;
  std::string msg = "no variable '" + name + "' in the TensorFlow checkpoint '" + prefix_ +
                    ".index' (" + std::to_string(names_.size()) + " variables).";
  auto near = close_matches(name, names_);
  // TF graph tensor names carry an output index that checkpoint keys lack.
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos && has(name.substr(0, colon))) {
    near.erase(std::remove(near.begin(), near.end(), name.substr(0, colon)), near.end());
    near.insert(near.begin(), name.substr(0, colon));
  }
  if (!near.empty()) msg += " Did you mean " + join(near, ", ") + "?";
  throw Error(msg);
}

std::string TFCheckpointReader::read_bytes(const std::string& name) const {
  return checked_bytes(entry(name), nullptr);
}

std::string TFCheckpointReader::checked_bytes(const TFTensorEntry& e, const char* wanted) const {
  const std::string what = "variable '" + e.name + "' (" + tf_dtype_name(e.dtype) + ") of the "
                           "TensorFlow checkpoint '" + prefix_ + "'";
  if (e.sliced)
    throw Error(what + " is a partitioned variable, saved as slices; t2t does not read those. "
                "Re-save it unpartitioned with TensorFlow");
  if (e.dtype == static_cast<int>(TFDType::kString))
    throw Error(what + " holds strings, which t2t does not read as tensor bytes");
  if (wanted) throw Error(what + " cannot be read as " + wanted);
  const int64_t elem = element_size(e.dtype);
  if (elem == 0) throw Error(what + " has a dtype t2t does not read");
  const std::string path = shard_path(e.shard_id);
  if (e.num_elements() > e.size / elem || e.num_elements() * elem != e.size)
    throw Error(what + " is " + std::to_string(e.size) + " bytes in '" + path + "', not the " +
                std::to_string(e.num_elements()) + " elements its shape gives: the index is "
                "damaged");
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const uintmax_t file_size = fs::file_size(path, ec);
  if (!in || ec) throw Error("cannot read '" + path + "', the data shard of " + what);
  if (static_cast<uintmax_t>(e.offset) > file_size ||
      static_cast<uintmax_t>(e.size) > file_size - static_cast<uintmax_t>(e.offset))
    throw Error("the data shard '" + path + "' is " + std::to_string(file_size) +
                " bytes, but " + what + " lies at bytes " + std::to_string(e.offset) + ".." +
                std::to_string(e.offset) + "+" + std::to_string(e.size) +
                ": the file is truncated. Copy the checkpoint again");
  std::string bytes(static_cast<size_t>(e.size), '\0');
  in.seekg(e.offset);
  if (!in.read(bytes.data(), e.size))
    throw Error("cannot read " + what + " from '" + path + "'");
  if (crc32c(bytes) != unmask_crc32c(e.crc32c))
    throw Error("the bytes of " + what + " in '" + path +
                "' fail their CRC-32C check: the data shard is damaged. Copy the checkpoint "
                "again");
  return bytes;
}

std::vector<float> TFCheckpointReader::read_floats(const std::string& name) const {
  const TFTensorEntry& e = entry(name);
  const auto t = static_cast<TFDType>(e.dtype);
  const bool is_float = t == TFDType::kFloat || t == TFDType::kDouble ||
                        t == TFDType::kBFloat16 || t == TFDType::kHalf;
  const std::string bytes = checked_bytes(e, is_float ? nullptr : "floats");
  const char* p = bytes.data();
  std::vector<float> out(static_cast<size_t>(e.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t) {
      case TFDType::kFloat: out[i] = load<float>(p + 4 * i); break;
      case TFDType::kDouble: out[i] = static_cast<float>(load<double>(p + 8 * i)); break;
      // bfloat16 is the top half of a float32.
      case TFDType::kBFloat16: out[i] = bits_to_float(uint32_t{load<uint16_t>(p + 2 * i)} << 16); break;
      default: out[i] = half_to_float(load<uint16_t>(p + 2 * i));
    }
  }
  return out;
}

std::vector<int64_t> TFCheckpointReader::read_ints(const std::string& name) const {
  const TFTensorEntry& e = entry(name);
  const auto t = static_cast<TFDType>(e.dtype);
  const bool is_int = t == TFDType::kInt32 || t == TFDType::kInt64 || t == TFDType::kInt16 ||
                      t == TFDType::kInt8 || t == TFDType::kUInt8 || t == TFDType::kBool;
  const std::string bytes = checked_bytes(e, is_int ? nullptr : "integers");
  const char* p = bytes.data();
  std::vector<int64_t> out(static_cast<size_t>(e.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t) {
      case TFDType::kInt64: out[i] = load<int64_t>(p + 8 * i); break;
      case TFDType::kInt32: out[i] = load<int32_t>(p + 4 * i); break;
      case TFDType::kInt16: out[i] = load<int16_t>(p + 2 * i); break;
      case TFDType::kInt8: out[i] = load<int8_t>(p + i); break;
      default: out[i] = load<uint8_t>(p + i);  // uint8 and bool
    }
  }
  return out;
}

int64_t TFCheckpointReader::read_scalar_int(const std::string& name) const {
  const auto v = read_ints(name);
  if (v.size() != 1)
    throw Error("variable '" + name + "' of the TensorFlow checkpoint '" + prefix_ + "' has " +
                std::to_string(v.size()) + " elements, not the one of a scalar");
  return v[0];
}

bool is_tf_checkpoint(const std::string& prefix) {
  std::error_code ec;
  return fs::is_regular_file(prefix + ".index", ec);
}

namespace {

// The value of a text-format string field: C escapes, and octal escapes
// for the non-ASCII bytes that TF's text format writes that way.
std::string unquote(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    if (c >= '0' && c <= '7') {
      int v = 0;
      for (int k = 0; k < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k, ++i)
        v = v * 8 + (s[i] - '0');
      --i;
      out += static_cast<char>(v);
    } else {
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
    }
  }
  return out;
}

// `model_checkpoint_path: "..."` of a TF `checkpoint` file, or "".
std::string model_checkpoint_path(const std::string& text) {
  for (std::string_view line : split_lines(text)) {
    const std::string l = trim(line);
    if (!starts_with(l, "model_checkpoint_path:")) continue;
    std::string v = trim(std::string_view(l).substr(std::strlen("model_checkpoint_path:")));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      return unquote(std::string_view(v).substr(1, v.size() - 2));
  }
  return "";
}

}  // namespace

std::vector<std::pair<int64_t, std::string>> list_tf_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!starts_with(name, "model.ckpt-") || !ends_with(name, ".index")) continue;
    const std::string digits = name.substr(11, name.size() - 11 - 6);
    if (digits.empty() || digits.size() > 18 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    found.emplace_back(std::stoll(digits), (fs::path(dir) / name.substr(0, name.size() - 6)).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string find_tf_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (is_tf_checkpoint(path)) return path;
    // The index or a data shard named instead of the prefix.
    for (const char* marker : {".index", ".data-"}) {
      const size_t at = path.rfind(marker);
      if (at != std::string::npos && is_tf_checkpoint(path.substr(0, at)))
        return path.substr(0, at);
    }
    return "";
  }
  const fs::path dir(path);
  const fs::path state = dir / "checkpoint";
  if (fs::is_regular_file(state, ec)) {
    // t2t's own `checkpoint` file holds a bare name and no such line.
    const std::string named = model_checkpoint_path(read_file(state.string()));
    if (!named.empty()) {
      const fs::path p(named);
      if (p.is_relative() && is_tf_checkpoint((dir / p).string())) return (dir / p).string();
      if (p.is_absolute() && is_tf_checkpoint(named)) return named;
      if (p.is_absolute() && is_tf_checkpoint((dir / p.filename()).string()))
        return (dir / p.filename()).string();
      throw Error("the TensorFlow `checkpoint` file '" + state.string() + "' names '" + named +
                  "', but there is no '" + (p.is_relative() ? (dir / p).string() : named) +
                  ".index'" + (p.is_absolute() ? " nor '" + (dir / p.filename()).string() +
                  ".index'" : std::string()) + ". Copy that checkpoint's files into the "
                  "directory, or name another checkpoint by its prefix");
    }
  }
  // No `checkpoint` file of TF's: the newest model.ckpt-N.index.
  const auto all = list_tf_checkpoints(path);
  return all.empty() ? std::string() : all.back().second;
}

}  // namespace t2t
