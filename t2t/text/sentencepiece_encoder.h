// A TextEncoder over a SentencePiece model (libsentencepiece), trained in
// process. Its ids follow T2T's convention: 0 = "<pad>", 1 = "<EOS>",
// 2 = "<unk>", no BOS; so models and data built with it fit the rest of t2t.
//
// Text round trips exactly: the normalization defaults to "identity" and
// whitespace is kept as is (the SentencePiece defaults, NFKC and collapsing
// spaces, would change text), and models trained here carry byte_fallback:
// 256 pieces <0x00>..<0xFF> (ids 3 to 258, after the reserved ones) spell a
// character the model never learned as its UTF-8 bytes, so a rare CJK
// character or an emoji comes back as itself instead of <unk>.
//
// Models without byte pieces (trained before, elsewhere, or with
// byte_fallback = false) load and work as they always did: a character
// they lack encodes as <unk> (id 2) and decodes as "⁇" (U+2047).
//
// Encoding goes word by word, through a cache. No piece of a model trained
// to split on whitespace (SentencePiece's default) spans a space, so the
// best segmentation of a sentence is that of each space-separated word on
// its own: encode() looks words up in a bounded cache shared by all threads
// and asks SentencePiece only for new ones, which makes English text
// several times faster to encode. The one difference from encoding the
// whole sentence at once: where two segmentations of a word score exactly
// the same ("mumumu" as mu+mumu or mumu+mu), SentencePiece's float sums
// from the sentence's start may pick the other one; both decode alike, and
// real text rarely has such ties. Words are used only where the model
// allows it (identity normalization with the dummy prefix, no piece with a
// space inside) and for text without leading, trailing or doubled spaces;
// anything else is encoded whole.
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
  // 0.9995 suits Chinese's large character set (SentencePiece's advice).
  double character_coverage = 0.9995;
  // Train on a random sample of at most this many sentences: training time
  // and memory grow with the sample, and quality barely does beyond it.
  int64_t input_sentence_size = 1000000;
  uint32_t seed = 1;                                 // for the sample
  int num_threads = 0;                               // 0: all cores
  std::string normalization_rule_name = "identity";  // or "nmt_nfkc", "nfkc", ...
  // False lets SentencePiece return a smaller vocabulary when the corpus
  // cannot fill vocab_size instead of failing.
  bool hard_vocab_limit = true;
  int max_sentence_length = 4192;  // bytes; longer sentences are skipped
  // Unknown characters as UTF-8 byte pieces rather than <unk>. The 256 byte
  // pieces count towards vocab_size, which must then exceed 259 + the
  // characters the model covers.
  bool byte_fallback = true;
};

class SentencePieceEncoder : public TextEncoder {
 public:
  // Loads MODEL.model. Throws t2t::Error naming the file when it cannot.
  explicit SentencePieceEncoder(const std::string& model_path);
  ~SentencePieceEncoder() override;
  SentencePieceEncoder(SentencePieceEncoder&&) noexcept;
  SentencePieceEncoder& operator=(SentencePieceEncoder&&) noexcept;

  // Trains a model, writes MODEL_PREFIX.model and MODEL_PREFIX.vocab (piece
  // and score per line) atomically, and returns the loaded encoder.
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
  // Loads a freshly trained model and writes its files.
  static SentencePieceEncoder from_trained(const std::string& model_proto,
                                           const std::string& model_prefix);
  void load_serialized(const std::string& model_proto, const std::string& origin);
  // Sets up the word cache when the loaded model allows it.
  void init_word_cache();
  // Writes MODEL_PREFIX.model and MODEL_PREFIX.vocab.
  void write_files(const std::string& model_proto, const std::string& model_prefix) const;

  class WordCache;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::unique_ptr<WordCache> words_;  // null when words cannot be encoded apart
};

}  // namespace t2t
