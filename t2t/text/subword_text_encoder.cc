#include "t2t/text/subword_text_encoder.h"

#include <functional>
#include <mutex>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/text/subword_internal.h"
#include "t2t/text/utf8.h"

namespace t2t {

namespace {

// Characters the escaping itself produces; every alphabet contains them.
constexpr std::u32string_view kEscapeChars = U"\\_u;0123456789";
constexpr char32_t kMaxCodepoint = 0x10FFFF;
constexpr char32_t kUndefinedChar = 0x3013;  // GETA MARK, T2T's stand-in

bool in_bitmap(const std::vector<uint64_t>& bits, char32_t c) {
  return c <= kMaxCodepoint && ((bits[c >> 6] >> (c & 63)) & 1);
}

}  // namespace

namespace subword_internal {

std::vector<uint64_t> alphabet_bitmap(std::u32string_view alphabet) {
  std::vector<uint64_t> bits((kMaxCodepoint + 64) / 64, 0);
  for (char32_t c : alphabet) {
    if (c <= kMaxCodepoint) bits[c >> 6] |= uint64_t{1} << (c & 63);
  }
  for (char32_t c : kEscapeChars) bits[c >> 6] |= uint64_t{1} << (c & 63);
  return bits;
}

void escape_into(std::u32string_view token, const std::vector<uint64_t>& alphabet,
                 std::u32string& out) {
  for (char32_t c : token) {
    if (c == U'\\') {
      out += U"\\\\";
    } else if (c == U'_') {
      out += U"\\u";
    } else if (c != U'\n' && in_bitmap(alphabet, c)) {
      out.push_back(c);
    } else {
      out.push_back(U'\\');
      for (char d : std::to_string(static_cast<uint32_t>(c))) out.push_back(char32_t(d));
      out.push_back(U';');
    }
  }
  out.push_back(U'_');
}

std::u32string collect_alphabet(const std::vector<std::u32string_view>& strings) {
  std::vector<uint64_t> bits((kMaxCodepoint + 64) / 64, 0);
  for (std::u32string_view s : strings) {
    for (char32_t c : s) bits[c >> 6] |= uint64_t{1} << (c & 63);
  }
  for (char32_t c : kEscapeChars) bits[c >> 6] |= uint64_t{1} << (c & 63);
  std::u32string alphabet;
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t word = bits[w]; word; word &= word - 1) {
      alphabet.push_back(static_cast<char32_t>(w * 64 + __builtin_ctzll(word)));
    }
  }
  return alphabet;
}

void SubtokenTrie::build(const std::vector<std::u32string>& subtokens, size_t first) {
  size_t chars = 0;
  for (size_t i = first; i < subtokens.size(); ++i) chars += subtokens[i].size();
  size_t cap = 16;
  while (cap < chars * 2) cap <<= 1;
  edges_.assign(cap, Edge{0, 0, kNone});
  mask_ = cap - 1;
  ids_.assign(1, -1);
  for (size_t i = first; i < subtokens.size(); ++i) {
    uint32_t node = 0;
    for (char32_t c : subtokens[i]) node = add_child(node, c);
    if (node != 0) ids_[node] = static_cast<int64_t>(i);
  }
}

uint32_t SubtokenTrie::add_child(uint32_t node, char32_t c) {
  size_t i = murmur_mix64(node * kGoldenGamma + c) & mask_;
  for (;; i = (i + 1) & mask_) {
    const Edge& e = edges_[i];
    if (e.child == kNone) break;
    if (e.parent == node && e.ch == c) return e.child;
  }
  const uint32_t child = static_cast<uint32_t>(ids_.size());
  ids_.push_back(-1);
  edges_[i] = Edge{node, c, child};
  return child;
}

}  // namespace subword_internal

using namespace subword_internal;

std::string escape_token(std::string_view token, std::u32string_view alphabet) {
  std::u32string out;
  escape_into(utf8_to_u32(token), alphabet_bitmap(alphabet), out);
  return u32_to_utf8(out);
}

std::string unescape_token(std::string_view escaped) {
  if (!escaped.empty() && escaped.back() == '_') escaped.remove_suffix(1);
  std::string out;
  out.reserve(escaped.size());
  size_t i = 0;
  const size_t n = escaped.size();
  // Left to right, trying "\u", then "\\", then "\<digits>;" at each
  // backslash, the alternatives of T2T's unescaping regex in its order.
  while (i < n) {
    if (escaped[i] != '\\' || i + 1 >= n) {
      out.push_back(escaped[i++]);
      continue;
    }
    const char next = escaped[i + 1];
    if (next == 'u') {
      out.push_back('_');
      i += 2;
      continue;
    }
    if (next == '\\') {
      out.push_back('\\');
      i += 2;
      continue;
    }
    size_t j = i + 1;
    uint64_t value = 0;
    bool too_big = false;
    while (j < n && escaped[j] >= '0' && escaped[j] <= '9') {
      value = value * 10 + static_cast<uint64_t>(escaped[j] - '0');
      if (value > kMaxCodepoint) too_big = true, value = kMaxCodepoint + 1;
      ++j;
    }
    if (j == i + 1 || j >= n || escaped[j] != ';') {
      out.push_back(escaped[i++]);  // not an escape; keep the backslash
      continue;
    }
    // Python would hand back a lone surrogate here, which UTF-8 cannot hold.
    const bool surrogate = value >= 0xD800 && value <= 0xDFFF;
    append_utf8(out, (too_big || surrogate) ? kUndefinedChar : static_cast<char32_t>(value));
    i = j + 1;
  }
  return out;
}

// ---- Vocabulary index and per-token cache -----------------------------------

struct SubwordTextEncoder::Cache {
  // Direct-mapped, as T2T's: a token's slot is its hash modulo the size, and
  // a newer token takes the slot over. Slots are locked in stripes so that
  // threads encoding at once rarely wait on each other.
  static constexpr size_t kSlots = size_t{1} << 16;
  static constexpr size_t kStripes = 64;
  // Longer tokens (runs of Chinese, say) are seldom seen twice.
  static constexpr size_t kMaxTokenLen = 48;
  struct Slot {
    std::u32string token;
    std::vector<int64_t> ids;
  };
  std::vector<Slot> slots = std::vector<Slot>(kSlots);
  std::mutex stripes[kStripes];
};

SubwordTextEncoder::SubwordTextEncoder()
    : index_(std::make_unique<Index>()), cache_(std::make_unique<Cache>()) {
  set_alphabet(U"");
}
SubwordTextEncoder::~SubwordTextEncoder() = default;
SubwordTextEncoder::SubwordTextEncoder(SubwordTextEncoder&&) noexcept = default;
SubwordTextEncoder& SubwordTextEncoder::operator=(SubwordTextEncoder&&) noexcept = default;

void SubwordTextEncoder::set_alphabet(std::u32string alphabet) {
  alphabet_ = std::move(alphabet);
  alphabet_bits_ = alphabet_bitmap(alphabet_);
}

void SubwordTextEncoder::set_subtokens(const std::vector<std::u32string>& subtokens,
                                       size_t first_indexed) {
  subtokens_.clear();
  subtokens_.reserve(subtokens.size());
  for (const auto& s : subtokens) subtokens_.push_back(u32_to_utf8(s));
  auto index = std::make_unique<Index>();
  index->trie.build(subtokens, first_indexed);
  index_ = std::move(index);
  cache_ = std::make_unique<Cache>();
}

SubwordTextEncoder SubwordTextEncoder::from_subtokens(std::vector<std::string> subtokens) {
  if (subtokens.empty()) throw Error("a subword vocabulary needs at least one subtoken");
  std::vector<std::u32string> subtokens32;
  subtokens32.reserve(subtokens.size());
  for (const std::string& s : subtokens) subtokens32.push_back(utf8_to_u32(s));
  SubwordTextEncoder enc;
  std::vector<std::u32string_view> views(subtokens32.begin(), subtokens32.end());
  enc.set_alphabet(collect_alphabet(views));
  enc.set_subtokens(subtokens32, 0);
  return enc;
}

SubwordTextEncoder SubwordTextEncoder::load(const std::string& vocab_path) {
  std::vector<std::string> subtokens;
  for (const std::u32string& text :
       read_utf8_lines(vocab_path, "is this really a .subwords vocabulary?")) {
    std::u32string_view s = python_rstrip(text);
    // T2T writes single quotes; other tools write double quotes or none.
    if (!s.empty() &&
        ((s.front() == U'\'' && s.back() == U'\'') || (s.front() == U'"' && s.back() == U'"'))) {
      s = s.size() >= 2 ? s.substr(1, s.size() - 2) : std::u32string_view();
    }
    subtokens.push_back(u32_to_utf8(s));
  }
  if (subtokens.empty()) {
    throw Error("subword vocab file '" + vocab_path +
                "' is empty; rebuild the vocabulary (delete the file and rerun datagen)");
  }
  return from_subtokens(std::move(subtokens));
}

void SubwordTextEncoder::store_to_file(const std::string& path, bool add_single_quotes) const {
  std::string content;
  for (const std::string& s : subtokens_) {
    if (add_single_quotes) content.push_back('\'');
    content += s;
    if (add_single_quotes) content.push_back('\'');
    content.push_back('\n');
  }
  write_file_atomic(path, content);
}

// ---- Encoding and decoding --------------------------------------------------

std::string SubwordTextEncoder::escape(std::string_view token) const {
  std::u32string out;
  escape_into(utf8_to_u32(token), alphabet_bits_, out);
  return u32_to_utf8(out);
}

void SubwordTextEncoder::escaped_ids(std::u32string_view escaped, std::vector<int64_t>& out) const {
  const bool ok =
      greedy_split(index_->trie, escaped, [&](size_t, size_t, int64_t id) { out.push_back(id); });
  if (!ok) {
    throw Error("subword vocabulary cannot spell '" + u32_to_utf8(escaped) +
                "': it lacks a single-character subtoken; a vocabulary must list every "
                "character of its alphabet on a line of its own (T2T-built ones do)");
  }
}

void SubwordTextEncoder::token_ids(std::u32string_view token, std::vector<int64_t>& out) const {
  const bool cacheable = token.size() <= Cache::kMaxTokenLen;
  size_t slot_index = 0;
  if (cacheable) {
    slot_index = std::hash<std::u32string_view>()(token) & (Cache::kSlots - 1);
    std::lock_guard<std::mutex> lock(cache_->stripes[slot_index % Cache::kStripes]);
    const Cache::Slot& slot = cache_->slots[slot_index];
    if (slot.token == token && !slot.ids.empty()) {
      out.insert(out.end(), slot.ids.begin(), slot.ids.end());
      return;
    }
  }
  thread_local std::u32string escaped;
  escaped.clear();
  escape_into(token, alphabet_bits_, escaped);
  const size_t first = out.size();
  escaped_ids(escaped, out);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->stripes[slot_index % Cache::kStripes]);
    Cache::Slot& slot = cache_->slots[slot_index];
    slot.token.assign(token);
    slot.ids.assign(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }
}

std::vector<int64_t> SubwordTextEncoder::encode(std::string_view text) const {
  const std::u32string u = utf8_to_u32(text);
  std::vector<int64_t> ids;
  for (std::u32string_view token : tokenizer::encode(std::u32string_view(u))) token_ids(token, ids);
  return ids;
}

std::vector<int64_t> SubwordTextEncoder::encode_open(std::string_view text) const {
  const std::u32string u = utf8_to_u32(text);
  const auto tokens = tokenizer::encode(std::u32string_view(u));
  std::vector<int64_t> ids;
  for (size_t t = 0; t + 1 < tokens.size(); ++t) token_ids(tokens[t], ids);
  if (tokens.empty()) return ids;
  std::u32string escaped;
  escape_into(tokens.back(), alphabet_bits_, escaped);
  if (!escaped.empty() && escaped.back() == U'_') escaped.pop_back();  // the end-of-token mark
  if (!escaped.empty()) escaped_ids(escaped, ids);
  return ids;
}

std::vector<int64_t> SubwordTextEncoder::encode_without_tokenizing(std::string_view token) const {
  std::vector<int64_t> ids;
  token_ids(utf8_to_u32(token), ids);
  return ids;
}

std::vector<std::string> SubwordTextEncoder::decode_list(const std::vector<int64_t>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    out.push_back(id >= 0 && id < vocab_size() ? subtokens_[static_cast<size_t>(id)]
                                               : std::string());
  }
  return out;
}

std::string SubwordTextEncoder::decode(const std::vector<int64_t>& ids) const {
  std::string concatenated;
  for (int64_t id : ids) {
    if (id != kPadId && id >= 0 && id < vocab_size()) {
      concatenated += subtokens_[static_cast<size_t>(id)];
    }
  }
  // '_' ends every escaped token and occurs nowhere else in one.
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start <= concatenated.size()) {
    size_t end = concatenated.find('_', start);
    if (end == std::string::npos) end = concatenated.size();
    if (end > start) {
      std::string token = unescape_token(std::string_view(concatenated).substr(start, end - start));
      if (!token.empty()) tokens.push_back(std::move(token));
    }
    start = end + 1;
  }
  return tokenizer::decode(tokens);
}

}  // namespace t2t
