// Text encoders: text <-> ids, with T2T's reserved ids (text_encoder.py):
// 0 is padding and 1 end-of-sequence in every vocabulary. encode() never
// appends EOS; decode() drops padding but decodes every other id, EOS
// included. No LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace t2t {

constexpr int64_t kPadId = 0;
constexpr int64_t kEosId = 1;
constexpr int64_t kNumReservedIds = 2;
inline constexpr std::string_view kPadToken = "<pad>";
inline constexpr std::string_view kEosToken = "<EOS>";
// {"<pad>", "<EOS>"}, in id order.
const std::vector<std::string>& reserved_tokens();

class TextEncoder {
 public:
  virtual ~TextEncoder() = default;

  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  // One string per id, for showing what a model produced.
  virtual std::vector<std::string> decode_list(const std::vector<int64_t>& ids) const = 0;
  virtual int64_t vocab_size() const = 0;

  static bool is_reserved(int64_t id) { return id >= 0 && id < kNumReservedIds; }
  int64_t num_reserved_ids() const { return kNumReservedIds; }
};

// Ids without padding (kPadId removed wherever it occurs).
std::vector<int64_t> strip_pad(const std::vector<int64_t>& ids);

// UTF-8 bytes shifted past the reserved ids: id = byte + 2, vocab size 258.
class ByteTextEncoder : public TextEncoder {
 public:
  std::vector<int64_t> encode(std::string_view text) const override;
  // Reserved ids other than padding decode to their token text ("<EOS>");
  // byte runs that are not valid UTF-8 become U+FFFD. Throws t2t::Error on
  // an id outside [0, 258).
  std::string decode(const std::vector<int64_t>& ids) const override;
  std::vector<std::string> decode_list(const std::vector<int64_t>& ids) const override;
  int64_t vocab_size() const override { return 256 + kNumReservedIds; }
};

// Whitespace-separated tokens looked up in a fixed vocabulary.
class TokenTextEncoder : public TextEncoder {
 public:
  // From a file of one token per line (stripped), taken as is, as in T2T:
  // it must list "<pad>" and "<EOS>" first itself. `replace_oov`: the
  // in-vocabulary token unknown ones encode as (unset: an error).
  // `reverse`: token sequences back to front.
  static TokenTextEncoder from_file(const std::string& vocab_path,
                                    std::optional<std::string> replace_oov = std::nullopt,
                                    bool reverse = false);
  // From a list; "<pad>" and "<EOS>" are put first (and dropped elsewhere).
  static TokenTextEncoder from_list(const std::vector<std::string>& tokens,
                                    std::optional<std::string> replace_oov = std::nullopt,
                                    bool reverse = false);

  // Throws t2t::Error naming an unknown token when no replace_oov was given.
  std::vector<int64_t> encode(std::string_view text) const override;
  // Tokens joined by single spaces; ids outside the vocabulary read "ID_<n>".
  std::string decode(const std::vector<int64_t>& ids) const override;
  std::vector<std::string> decode_list(const std::vector<int64_t>& ids) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(tokens_.size()); }

  const std::vector<std::string>& tokens() const { return tokens_; }
  // One token per line, reserved tokens included; written atomically.
  void store_to_file(const std::string& path) const;

 private:
  TokenTextEncoder() = default;
  void init(std::vector<std::string> tokens, std::optional<std::string> replace_oov, bool reverse,
            const std::string& origin);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> token_to_id_;
  std::optional<int64_t> oov_id_;
  bool reverse_ = false;
  std::string origin_;  // file or "token list", for messages
};

}  // namespace t2t
