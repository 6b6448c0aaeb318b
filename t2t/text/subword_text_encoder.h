// T2T's SubwordTextEncoder (tensor2tensor/data_generators/text_encoder.py),
// reproduced to the id, in encoding and in building from token counts.
//
// Encoding: tokenize (tokenizer.h), escape each token and end it with '_',
// split it greedily into the longest vocabulary subtokens, left to right.
//
// Vocabulary file: one subtoken per line, in single quotes; the line number
// is the id. "'<pad>_'" and "'<EOS>_'" come first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "t2t/text/text_encoder.h"
#include "t2t/text/tokenizer.h"

namespace t2t {

// '\' -> "\\", '_' -> "\u", characters not in `alphabet` and '\n' ->
// "\<decimal code point>;", then a final '_'. The escape characters
// \ _ u ; 0-9 always count as in the alphabet.
std::string escape_token(std::string_view token, std::u32string_view alphabet);
// Inverse of escape_token; a trailing '_' is dropped. "\<n>;" with n not a
// valid code point (too large, or a UTF-16 surrogate) reads U+3013.
std::string unescape_token(std::string_view escaped);

class SubwordTextEncoder : public TextEncoder {
 public:
  // An encoder with no vocabulary (vocab_size() == 0); build or load one.
  SubwordTextEncoder();
  ~SubwordTextEncoder() override;
  SubwordTextEncoder(SubwordTextEncoder&&) noexcept;
  SubwordTextEncoder& operator=(SubwordTextEncoder&&) noexcept;

  // Reads a vocabulary file (T2T's or ours). Lines may be wrapped in single
  // or double quotes; the alphabet is every character that occurs. Throws
  // t2t::Error naming the file when it is missing, empty or not UTF-8.
  static SubwordTextEncoder load(const std::string& vocab_path);
  // The same from subtoken strings, id = position.
  static SubwordTextEncoder from_subtokens(std::vector<std::string> subtokens);

  // T2T's build_from_generator: build_to_target_size(target_size, counts of
  // `texts`, 1, 1000, ...).
  static SubwordTextEncoder build_from_corpus(
      const std::vector<std::string>& texts, int64_t target_size,
      std::optional<int> max_subtoken_length = std::nullopt,
      const std::vector<std::string>& reserved = reserved_tokens());

  // Binary search over the minimum subtoken count in [min_val, max_val] for
  // a vocabulary within 1% of target_size; returns the closest one tried.
  // `max_subtoken_length` bounds candidates to max_subtoken_length - 1
  // characters (T2T's quirk). Runs on all cores.
  static SubwordTextEncoder build_to_target_size(
      int64_t target_size, const TokenCounts& counts, int64_t min_val = 1, int64_t max_val = 1000,
      std::optional<int> max_subtoken_length = std::nullopt,
      const std::vector<std::string>& reserved = reserved_tokens(), int num_iterations = 4);

  // One vocabulary for a fixed minimum count. `reserved` must start with
  // "<pad>", "<EOS>"; its tokens get the first ids, escaped ("<pad>_").
  static SubwordTextEncoder build_from_token_counts(
      const TokenCounts& counts, int64_t min_count, int num_iterations = 4,
      const std::vector<std::string>& reserved = reserved_tokens(),
      std::optional<int> max_subtoken_length = std::nullopt);

  // Thread-safe; results are cached per token.
  std::vector<int64_t> encode(std::string_view text) const override;
  // `token` taken as one token, without running the tokenizer.
  std::vector<int64_t> encode_without_tokenizing(std::string_view token) const;
  // encode() with the last token left open: its subtokens spelled without
  // the end-of-token mark, so that what follows may continue it. For text
  // that ends inside a word (a term or a prefix in a script written without
  // spaces).
  std::vector<int64_t> encode_open(std::string_view text) const;
  // Padding ids are dropped; ids outside the vocabulary read as nothing.
  std::string decode(const std::vector<int64_t>& ids) const override;
  // The subtoken string of each id ("" outside the vocabulary).
  std::vector<std::string> decode_list(const std::vector<int64_t>& ids) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(subtokens_.size()); }

  const std::vector<std::string>& all_subtoken_strings() const { return subtokens_; }
  // Sorted code points.
  const std::u32string& alphabet() const { return alphabet_; }
  // escape_token with this vocabulary's alphabet.
  std::string escape(std::string_view token) const;

  // One subtoken per line, single-quoted unless add_single_quotes is false;
  // written atomically.
  void store_to_file(const std::string& path, bool add_single_quotes = true) const;

 private:
  struct Index;
  struct Cache;
  friend struct SubwordBuilder;

  // Subtokens from first_indexed on are matched; earlier ones only hold
  // their ids.
  void set_subtokens(const std::vector<std::u32string>& subtokens, size_t first_indexed);
  void set_alphabet(std::u32string alphabet);
  void token_ids(std::u32string_view token, std::vector<int64_t>& out) const;
  // Appends the ids of an escaped token; throws t2t::Error when a character
  // has no single-character subtoken.
  void escaped_ids(std::u32string_view escaped, std::vector<int64_t>& out) const;

  std::vector<std::string> subtokens_;  // UTF-8, by id
  std::u32string alphabet_;
  std::vector<uint64_t> alphabet_bits_;  // one bit per code point
  std::unique_ptr<Index> index_;
  std::unique_ptr<Cache> cache_;
};

}  // namespace t2t
