// A text problem's vocabulary: its type, file name, learning and loading.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace t2t {

class TextEncoder;  // t2t/text/text_encoder.h

enum class VocabType {
  kSentencePiece,  // default: learned in-process, unigram or BPE
  kSubword,        // T2T's SubwordTextEncoder, compatible with its .subwords files
  kByte,           // UTF-8 bytes, nothing to learn
  kToken,          // whitespace tokens, the most frequent ones
};

// "sentencepiece" (or "spm"), "subword", "byte", "token".
VocabType parse_vocab_type(const std::string& name);
std::string vocab_type_name(VocabType type);

struct VocabSpec {
  VocabType type = VocabType::kSentencePiece;
  int64_t size = 1 << 15;                 // approximate for subword and sentencepiece
  std::string model_type = "unigram";     // sentencepiece: unigram or bpe
  int64_t max_subtoken_length = 200;      // subword
  // Learning only: words a sentencepiece vocabulary keeps as one piece (the
  // tags of training parts); the other types learn them as any word.
  std::vector<std::string> whole_words;
};

// T2T's file name: "vocab.<problem>.<size>.subwords", ".spm" (+ ".model")
// or ".tokens"; with separate vocabularies `lang` (e.g. "en") is appended
// before SentencePiece's extension. Empty for byte.
std::string vocab_filename(const std::string& problem, const VocabSpec& spec,
                           const std::string& lang);

// Loads the vocabulary stored at `path` (as vocab_filename names it).
std::shared_ptr<TextEncoder> load_vocab(const std::string& path, const VocabSpec& spec);

// Learns a vocabulary from `sample`, stores it at `path` atomically.
std::shared_ptr<TextEncoder> learn_vocab(const std::vector<std::string>& sample,
                                         const VocabSpec& spec, const std::string& path,
                                         int threads);

// True when the vocabulary file(s) for `path` exist.
bool vocab_exists(const std::string& path, const VocabSpec& spec);

}  // namespace t2t
