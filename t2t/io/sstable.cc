#include "t2t/io/sstable.h"

#include <cstdint>

#include "t2t/core/error.h"
#include "t2t/io/crc32c.h"

namespace t2t {

namespace {

// Footer: metaindex and index BlockHandles (two varint64 each, at most 10
// bytes a varint), zero-padded to 40 bytes, then the table's magic number.
constexpr size_t kFooterSize = 48;
constexpr size_t kHandlesSize = 40;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
// After every block: a compression-type byte and the masked CRC-32C of the
// block's contents followed by that byte.
constexpr size_t kBlockTrailerSize = 5;
constexpr uint8_t kNoCompression = 0;

uint32_t load_u32(const char* p) {
  const auto* b = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
         static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
}

uint64_t load_u64(const char* p) {
  return static_cast<uint64_t>(load_u32(p)) | static_cast<uint64_t>(load_u32(p + 4)) << 32;
}

class TableReader {
 public:
  TableReader(std::string_view table, const std::string& path) : table_(table), path_(path) {}

  [[noreturn]] void bad(const std::string& what) const {
    throw Error("cannot read the TensorFlow checkpoint index '" + path_ + "': " + what +
                ". The file is damaged or truncated (or is not a checkpoint index): "
                "copy it again from where the checkpoint was written");
  }

  // A varint of at most `max_bits` bits from `*s`, which it consumes.
  uint64_t varint(std::string_view* s, int max_bits, const char* what) const {
    uint64_t v = 0;
    for (int shift = 0; shift < max_bits; shift += 7) {
      if (s->empty()) bad(std::string("a varint (") + what + ") runs past its end");
      const uint8_t byte = static_cast<uint8_t>(s->front());
      s->remove_prefix(1);
      if (shift == 63 && byte > 1) bad(std::string("a varint (") + what + ") overflows 64 bits");
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        if (max_bits == 32 && v > 0xffffffffu)
          bad(std::string("a varint (") + what + ") overflows 32 bits");
        return v;
      }
    }
    bad(std::string("a varint (") + what + ") is too long");
  }

  struct Handle {
    uint64_t offset = 0, size = 0;
  };

  Handle handle(std::string_view* s, const char* what) const {
    Handle h;
    h.offset = varint(s, 64, what);
    h.size = varint(s, 64, what);
    return h;
  }

  // The contents of the block at `h`, its trailer checked.
  std::string_view block(const Handle& h, const char* what) const {
    const uint64_t n = table_.size();
    if (h.offset > n || h.size > n - h.offset || kBlockTrailerSize > n - h.offset - h.size)
      bad(std::string("the ") + what + " block (offset " + std::to_string(h.offset) + ", size " +
          std::to_string(h.size) + ") lies beyond the file's " + std::to_string(n) + " bytes");
    const char* p = table_.data() + h.offset;
    const uint8_t type = static_cast<uint8_t>(p[h.size]);
    const uint32_t stored = unmask_crc32c(load_u32(p + h.size + 1));
    if (crc32c(p, h.size + 1) != stored)
      bad(std::string("the ") + what + " block at offset " + std::to_string(h.offset) +
          " fails its CRC-32C check");
    // Checked after the CRC: a bad type byte in an intact block is not damage.
    if (type != kNoCompression)
      bad(std::string("the ") + what + " block is compressed (type " + std::to_string(type) +
          "); TensorFlow writes checkpoint indexes uncompressed and t2t reads no other");
    return std::string_view(p, h.size);
  }

  // Calls fn for each entry of a block: keys are prefix-compressed against
  // the previous key, with a restart array (uint32 offsets, then their
  // count) at the end that a sequential walk does not need but must not
  // overlap the entries.
  template <typename Fn>
  void for_each_in_block(std::string_view block, const char* kind, Fn&& fn) const {
    const std::string what = std::string(kind[0] == 'i' ? "an " : "a ") + kind;
    if (block.size() < 4) bad(what + " block is shorter than 4 bytes");
    const uint64_t restarts = load_u32(block.data() + block.size() - 4);
    if (restarts > (block.size() - 4) / 4)
      bad(what + " block's restart count " + std::to_string(restarts) +
          " does not fit in it");
    std::string_view s = block.substr(0, block.size() - 4 - 4 * restarts);
    std::string key;
    while (!s.empty()) {
      const uint64_t shared = varint(&s, 32, "key prefix length");
      const uint64_t non_shared = varint(&s, 32, "key length");
      const uint64_t value_size = varint(&s, 32, "value length");
      if (shared > key.size())
        bad(what + " block entry shares more of the previous key than it has");
      if (non_shared > s.size() || value_size > s.size() - non_shared)
        bad(what + " block entry runs past the block's end");
      key.resize(shared);
      key.append(s.data(), non_shared);
      fn(std::string_view(key), s.substr(non_shared, value_size));
      s.remove_prefix(non_shared + value_size);
    }
  }

  void run(const std::function<void(std::string_view, std::string_view)>& fn) const {
    if (table_.size() < kFooterSize)
      bad("it is " + std::to_string(table_.size()) + " bytes, shorter than a table's " +
          std::to_string(kFooterSize) + "-byte footer");
    const char* footer = table_.data() + table_.size() - kFooterSize;
    if (load_u64(footer + kHandlesSize) != kTableMagic)
      bad("its last 8 bytes are not the table magic number");
    std::string_view handles(footer, kHandlesSize);
    handle(&handles, "metaindex handle");
    const Handle index = handle(&handles, "index handle");
    std::string last_key;
    bool first = true;
    for_each_in_block(block(index, "index"), "index", [&](std::string_view, std::string_view v) {
      const Handle data = handle(&v, "data block handle");
      for_each_in_block(block(data, "data"), "data", [&](std::string_view key, std::string_view value) {
        if (!first && key <= last_key) bad("its keys are out of order at '" + std::string(key) + "'");
        first = false;
        last_key.assign(key);
        fn(key, value);
      });
    });
  }

 private:
  std::string_view table_;
  const std::string& path_;
};

}  // namespace

void for_each_sstable_entry(std::string_view table, const std::string& path,
                            const std::function<void(std::string_view key,
                                                     std::string_view value)>& fn) {
  TableReader(table, path).run(fn);
}

}  // namespace t2t

namespace t2t {

namespace {

void put_u32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A block whose entries all restart (no key shared with the previous one):
// a little larger than prefix-compressed, and read by every reader the same.
std::string make_block(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string block;
  std::vector<uint32_t> restarts;
  for (const auto& [key, value] : entries) {
    restarts.push_back(static_cast<uint32_t>(block.size()));
    put_varint(&block, 0);
    put_varint(&block, key.size());
    put_varint(&block, value.size());
    block += key;
    block += value;
  }
  if (restarts.empty()) restarts.push_back(0);  // as LevelDB writes an empty block
  for (uint32_t r : restarts) put_u32(&block, r);
  put_u32(&block, static_cast<uint32_t>(restarts.size()));
  return block;
}

// Appends `block` and its trailer to `table`; returns its handle's encoding.
std::string append_block(std::string* table, const std::string& block) {
  std::string handle;
  put_varint(&handle, table->size());
  put_varint(&handle, block.size());
  *table += block;
  table->push_back(static_cast<char>(kNoCompression));
  put_u32(table, mask_crc32c(crc32c(table->data() + table->size() - block.size() - 1,
                                    block.size() + 1)));
  return handle;
}

}  // namespace

std::string make_sstable(const std::vector<std::pair<std::string, std::string>>& entries) {
  for (size_t i = 1; i < entries.size(); ++i)
    if (!(entries[i - 1].first < entries[i].first))
      throw Error("make_sstable: keys must strictly increase ('" + entries[i - 1].first +
                  "' then '" + entries[i].first + "')");
  std::string table;
  const std::string data = append_block(&table, make_block(entries));
  const std::string metaindex = append_block(&table, make_block({}));
  // The index's one entry: a key at or after the data block's last.
  const std::string index = append_block(
      &table, make_block({{entries.empty() ? std::string() : entries.back().first, data}}));
  std::string footer = metaindex + index;
  footer.resize(kHandlesSize, '\0');
  put_u32(&footer, static_cast<uint32_t>(kTableMagic & 0xffffffffu));
  put_u32(&footer, static_cast<uint32_t>(kTableMagic >> 32));
  return table + footer;
}

}  // namespace t2t
