#include "t2t/io/example.h"

#include <algorithm>
#include <cstdint>

#include "t2t/core/error.h"

namespace t2t {

namespace {

// Wire tags (field number << 3 | wire type 2, length-delimited) of the
// fields on the path Example.features -> Features.feature (a map entry:
// key, value) -> Feature.int64_list -> Int64List.value (packed).
constexpr char kTagExampleFeatures = 0x0a;
constexpr char kTagFeaturesEntry = 0x0a;
constexpr char kTagEntryKey = 0x0a;
constexpr char kTagEntryValue = 0x12;
constexpr char kTagFeatureInt64List = 0x1a;
constexpr char kTagInt64ListValue = 0x0a;

// int64 fields are plain varints of the two's-complement bits (not zigzag),
// so negative values take ten bytes, as in TensorFlow.
inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

inline size_t field_size(size_t payload) { return 1 + varint_size(payload) + payload; }

struct Sizes {
  size_t packed;     // the varints of the values
  size_t int64list;  // Int64List message
  size_t feature;    // Feature message
  size_t entry;      // map entry message
};

}  // namespace

// Written by hand rather than through the generated classes: protobuf writes
// map entries in hash order unless asked for its slower deterministic mode,
// and building the message tree costs several allocations per feature. The
// output is what protobuf's deterministic mode gives: the tests compare it
// with bytes worked out by hand and with protobuf's Python implementation.
std::string serialize_example(const Int64Features& features) {
  std::vector<Sizes> sizes;
  sizes.reserve(features.size());
  size_t features_size = 0;
  for (const auto& [key, values] : features) {
    Sizes s{};
    for (int64_t v : values) s.packed += varint_size(static_cast<uint64_t>(v));
    // proto3 leaves out an empty repeated field.
    s.int64list = values.empty() ? 0 : field_size(s.packed);
    s.feature = field_size(s.int64list);
    s.entry = field_size(key.size()) + field_size(s.feature);
    features_size += field_size(s.entry);
    sizes.push_back(s);
  }
  std::string out(field_size(features_size), '\0');
  char* p = out.data();
  *p++ = kTagExampleFeatures;
  p = put_varint(p, features_size);
  size_t i = 0;
  for (const auto& [key, values] : features) {
    const Sizes& s = sizes[i++];
    *p++ = kTagFeaturesEntry;
    p = put_varint(p, s.entry);
    *p++ = kTagEntryKey;
    p = put_varint(p, key.size());
    p = std::copy(key.begin(), key.end(), p);
    *p++ = kTagEntryValue;
    p = put_varint(p, s.feature);
    *p++ = kTagFeatureInt64List;
    p = put_varint(p, s.int64list);
    if (values.empty()) continue;
    *p++ = kTagInt64ListValue;
    p = put_varint(p, s.packed);
    for (int64_t v : values) p = put_varint(p, static_cast<uint64_t>(v));
  }
  return out;
}

namespace {

// A reader of protocol-buffer wire format over one message's bytes. Written
// by hand so that t2t needs no protobuf run-time library: Debian's
// SentencePiece carries its own copy of one, and two in a process clash.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ >= end_; }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) bad("a varint runs past the end");
      const uint8_t byte = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    bad("a varint is longer than ten bytes");
  }

  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > static_cast<uint64_t>(end_ - p_)) bad("a field's length runs past the end");
    std::string_view out(p_, n);
    p_ += n;
    return out;
  }

  // Steps over a field of `wire_type` that is not wanted.
  void skip(uint32_t wire_type) {
    switch (wire_type) {
      case 0: varint(); return;
      case 1: advance(8); return;
      case 2: bytes(); return;
      case 5: advance(4); return;
      default: bad("unsupported wire type " + std::to_string(wire_type));
    }
  }

  [[noreturn]] static void bad(const std::string& what) {
    throw Error("cannot parse a tf.Example: " + what +
                ". The data file is damaged or does not hold tf.Examples: delete it and "
                "generate it again");
  }

 private:
  void advance(size_t n) {
    if (n > static_cast<size_t>(end_ - p_)) bad("a fixed-size field runs past the end");
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

// Int64List.value (field 1): packed (wire type 2) or one varint per value.
void parse_int64_list(std::string_view data, std::vector<int64_t>* values) {
  WireReader r(data);
  while (!r.done()) {
    const uint64_t tag = r.varint();
    const uint32_t field = static_cast<uint32_t>(tag >> 3), type = tag & 7;
    if (field == 1 && type == 2) {
      WireReader packed(r.bytes());
      while (!packed.done()) values->push_back(static_cast<int64_t>(packed.varint()));
    } else if (field == 1 && type == 0) {
      values->push_back(static_cast<int64_t>(r.varint()));
    } else {
      r.skip(type);
    }
  }
}

// Feature: a oneof of bytes_list (1), float_list (2), int64_list (3); the
// last one present wins, as in protobuf.
void parse_feature(const std::string& key, std::string_view data, std::vector<int64_t>* values) {
  WireReader r(data);
  const char* other = nullptr;
  while (!r.done()) {
    const uint64_t tag = r.varint();
    const uint32_t field = static_cast<uint32_t>(tag >> 3), type = tag & 7;
    if (field == 3 && type == 2) {
      values->clear();
      parse_int64_list(r.bytes(), values);
      other = nullptr;
    } else if ((field == 1 || field == 2) && type == 2) {
      r.bytes();
      other = field == 1 ? "bytes_list" : "float_list";
    } else {
      r.skip(type);
    }
  }
  if (other)
    throw Error("feature '" + key + "' of a tf.Example holds a " + other +
                ", but t2t reads only int64_list features; was the file written by another "
                "tool?");
}

}  // namespace

// Accepts every valid encoding other writers use: fields in any order,
// unpacked lists, unknown fields, repeated map keys (the last one wins).
Int64Features parse_example(std::string_view serialized) {
  Int64Features out;
  WireReader example(serialized);
  while (!example.done()) {
    const uint64_t tag = example.varint();
    if (tag != ((1 << 3) | 2)) {  // Example.features
      example.skip(tag & 7);
      continue;
    }
    WireReader features(example.bytes());
    while (!features.done()) {
      const uint64_t ftag = features.varint();
      if (ftag != ((1 << 3) | 2)) {  // Features.feature, a map entry
        features.skip(ftag & 7);
        continue;
      }
      WireReader entry(features.bytes());
      std::string key;
      std::string_view value;
      while (!entry.done()) {
        const uint64_t etag = entry.varint();
        if (etag == ((1 << 3) | 2)) key = std::string(entry.bytes());
        else if (etag == ((2 << 3) | 2)) value = entry.bytes();
        else entry.skip(etag & 7);
      }
      std::vector<int64_t>& values = out[key];
      values.clear();
      parse_feature(key, value, &values);
    }
  }
  return out;
}

}  // namespace t2t
