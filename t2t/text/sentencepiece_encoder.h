// A TextEncoder over a SentencePiece model, trained in process. Ids follow
// T2T's convention: 0 = "<pad>", 1 = "<EOS>", 2 = "<unk>", no BOS.
//
// Text round trips exactly: normalization defaults to "identity",
// whitespace is kept, and models trained here carry byte_fallback (pieces
// <0x00>..<0xFF>, ids 3 to 258), so an unlearned character comes back as
// itself. In a model without byte pieces it encodes as <unk> and decodes
// as "⁇" (U+2047).
//
// encode() goes word by word through a bounded cache shared by all
// threads: no piece of a model split on whitespace spans a space. Where two
// segmentations of a word tie exactly, the pick may differ from encoding
// the whole sentence; both decode alike. Used only where the model allows
// it (identity normalization with the dummy prefix, no piece with a space)
// and for text without leading, trailing or doubled spaces; anything else
// is encoded whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "t2t/text/text_encoder.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace t2t {

struct SentencePieceOptions {
  std::string model_type = "unigram";  // or "bpe"
  int vocab_size = 8000;
  // Share of characters the model must cover; the rest become <unk>.
  double character_coverage = 0.9995;
  // Train on a random sample of at most this many sentences.
  int64_t input_sentence_size = 1000000;
  uint32_t seed = 1;                                 // for the sample
  int num_threads = 0;                               // 0: all cores
  std::string normalization_rule_name = "identity";  // or "nmt_nfkc", "nfkc", ...
  // False: a smaller vocabulary when the corpus cannot fill vocab_size.
  bool hard_vocab_limit = true;
  int max_sentence_length = 4192;  // bytes; longer sentences are skipped
  // Unknown characters as UTF-8 byte pieces rather than <unk>; vocab_size
  // must then exceed 259 + the characters covered.
  bool byte_fallback = true;
  // Pieces kept whole wherever they occur (the tags of tagged
  // back-translation, "<BT>").
  std::vector<std::string> user_defined_symbols;
};

class SentencePieceEncoder : public TextEncoder {
 public:
  // Loads MODEL.model. Throws t2t::Error naming the file when it cannot.
  explicit SentencePieceEncoder(const std::string& model_path);
  ~SentencePieceEncoder() override;
  SentencePieceEncoder(SentencePieceEncoder&&) noexcept;
  SentencePieceEncoder& operator=(SentencePieceEncoder&&) noexcept;

  // Trains a model, writes MODEL_PREFIX.model and .vocab atomically, and
  // returns the loaded encoder.
  static SentencePieceEncoder train(const std::vector<std::string>& sentences,
                                    const std::string& model_prefix,
                                    const SentencePieceOptions& options = {});
  // The same over a text file, one sentence per line.
  static SentencePieceEncoder train_from_file(const std::string& text_path,
                                              const std::string& model_prefix,
                                              const SentencePieceOptions& options = {});

  std::vector<int64_t> encode(std::string_view text) const override;
  // SentencePiece on the whole text at once, without going word by word.
  std::vector<int64_t> encode_whole(std::string_view text) const;
  // Padding is dropped and EOS decodes to nothing; throws t2t::Error on an
  // id outside the vocabulary.
  std::string decode(const std::vector<int64_t>& ids) const override;
  std::vector<std::string> decode_list(const std::vector<int64_t>& ids) const override;
  int64_t vocab_size() const override;

  int64_t unk_id() const { return 2; }
  std::string id_to_piece(int64_t id) const;

 private:
  SentencePieceEncoder();
  static SentencePieceEncoder from_trained(const std::string& model_proto,
                                           const std::string& model_prefix);
  void load_serialized(const std::string& model_proto, const std::string& origin);
  void init_word_cache();
  void write_files(const std::string& model_proto, const std::string& model_prefix) const;

  class WordCache;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::unique_ptr<WordCache> words_;  // null when words cannot be encoded apart
};

}  // namespace t2t
