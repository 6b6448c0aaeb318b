#include "t2t/text/text_encoder.h"

#include <algorithm>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/text/utf8.h"

namespace t2t {

const std::vector<std::string>& reserved_tokens() {
  static const std::vector<std::string> tokens{std::string(kPadToken), std::string(kEosToken)};
  return tokens;
}

std::vector<int64_t> strip_pad(const std::vector<int64_t>& ids) {
  std::vector<int64_t> out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    if (id != kPadId) out.push_back(id);
  }
  return out;
}

// ---- ByteTextEncoder --------------------------------------------------------

std::vector<int64_t> ByteTextEncoder::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (unsigned char c : text) ids.push_back(int64_t{c} + kNumReservedIds);
  return ids;
}

namespace {

void check_byte_id(int64_t id) {
  if (id < 0 || id >= 256 + kNumReservedIds) {
    throw Error("byte encoder: id " + std::to_string(id) +
                " is outside its vocabulary [0, 258); were these ids made with another "
                "vocabulary?");
  }
}

}  // namespace

std::string ByteTextEncoder::decode(const std::vector<int64_t>& ids) const {
  std::string bytes;
  bytes.reserve(ids.size());
  for (int64_t id : ids) {
    check_byte_id(id);
    if (id == kPadId) continue;
    if (is_reserved(id)) {
      bytes += reserved_tokens()[static_cast<size_t>(id)];
    } else {
      bytes.push_back(static_cast<char>(id - kNumReservedIds));
    }
  }
  return utf8_replace_invalid(bytes);
}

std::vector<std::string> ByteTextEncoder::decode_list(const std::vector<int64_t>& ids) const {
  // One raw byte per id, as T2T returns them; not necessarily valid UTF-8.
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    check_byte_id(id);
    if (is_reserved(id)) {
      out.push_back(reserved_tokens()[static_cast<size_t>(id)]);
    } else {
      out.emplace_back(1, static_cast<char>(id - kNumReservedIds));
    }
  }
  return out;
}

// ---- TokenTextEncoder -------------------------------------------------------

TokenTextEncoder TokenTextEncoder::from_file(const std::string& vocab_path,
                                             std::optional<std::string> replace_oov, bool reverse) {
  std::vector<std::string> tokens;
  for (const std::u32string& text :
       read_utf8_lines(vocab_path, "vocab files must be UTF-8 text")) {
    tokens.push_back(u32_to_utf8(python_strip(text)));
  }
  if (tokens.empty()) {
    throw Error("vocab file '" + vocab_path + "' is empty; it needs one token per line");
  }
  TokenTextEncoder enc;
  enc.init(std::move(tokens), std::move(replace_oov), reverse, "vocab file '" + vocab_path + "'");
  return enc;
}

TokenTextEncoder TokenTextEncoder::from_list(const std::vector<std::string>& list,
                                             std::optional<std::string> replace_oov, bool reverse) {
  std::vector<std::string> tokens = reserved_tokens();
  for (const std::string& t : list) {
    if (t != kPadToken && t != kEosToken) tokens.push_back(t);
  }
  TokenTextEncoder enc;
  enc.init(std::move(tokens), std::move(replace_oov), reverse, "token list");
  return enc;
}

void TokenTextEncoder::init(std::vector<std::string> tokens, std::optional<std::string> replace_oov,
                            bool reverse, const std::string& origin) {
  tokens_ = std::move(tokens);
  reverse_ = reverse;
  origin_ = origin;
  token_to_id_.clear();
  token_to_id_.reserve(tokens_.size());
  // A token listed twice keeps its last id, as T2T's reverse mapping does.
  for (size_t i = 0; i < tokens_.size(); ++i) token_to_id_[tokens_[i]] = static_cast<int64_t>(i);
  if (replace_oov) {
    auto it = token_to_id_.find(*replace_oov);
    if (it == token_to_id_.end()) {
      throw Error("replace_oov token '" + *replace_oov + "' is not in the " + origin_ +
                  "; add it to the vocabulary or pick a token that is there");
    }
    oov_id_ = it->second;
  }
}

std::vector<int64_t> TokenTextEncoder::encode(std::string_view text) const {
  const std::u32string u = utf8_to_u32(text);
  std::vector<int64_t> ids;
  for (std::u32string_view piece : python_split(u)) {
    const std::string token = u32_to_utf8(piece);
    auto it = token_to_id_.find(token);
    if (it != token_to_id_.end()) {
      ids.push_back(it->second);
    } else if (oov_id_) {
      ids.push_back(*oov_id_);
    } else {
      throw Error("token '" + token + "' is not in the " + origin_ +
                  "; add it, or give the encoder a replace_oov token such as <UNK>");
    }
  }
  if (reverse_) std::reverse(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> TokenTextEncoder::decode_list(const std::vector<int64_t>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    if (id >= 0 && id < vocab_size()) {
      out.push_back(tokens_[static_cast<size_t>(id)]);
    } else {
      out.push_back("ID_" + std::to_string(id));
    }
  }
  if (reverse_) std::reverse(out.begin(), out.end());
  return out;
}

std::string TokenTextEncoder::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  const std::vector<std::string> tokens = decode_list(strip_pad(ids));
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) out.push_back(' ');
    out += tokens[i];
  }
  return out;
}

void TokenTextEncoder::store_to_file(const std::string& path) const {
  std::string content;
  for (const std::string& t : tokens_) {
    content += t;
    content.push_back('\n');
  }
  write_file_atomic(path, content);
}

}  // namespace t2t
