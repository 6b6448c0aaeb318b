#include "t2t/data/vocabulary.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/text/sentencepiece_encoder.h"
#include "t2t/text/subword_text_encoder.h"
#include "t2t/text/text_encoder.h"

namespace t2t {

namespace fs = std::filesystem;

namespace {

constexpr const char* kUnknownToken = "<unk>";
constexpr int64_t kMinByteFallbackVocab = 1024;

std::string strip_suffix(const std::string& s, const std::string& suffix) {
  return ends_with(s, suffix) ? s.substr(0, s.size() - suffix.size()) : s;
}

bool file_lists_token(const std::string& path, const std::string& token) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (trim(line) == token) return true;
  return false;
}

}  // namespace

VocabType parse_vocab_type(const std::string& name) {
  const std::string n = to_lower(trim(name));
  if (n == "sentencepiece" || n == "spm") return VocabType::kSentencePiece;
  if (n == "subword" || n == "subwords") return VocabType::kSubword;
  if (n == "byte") return VocabType::kByte;
  if (n == "token") return VocabType::kToken;
  throw Error("unknown vocabulary type '" + name +
              "'; use sentencepiece, subword (T2T's), byte or token");
}

std::string vocab_type_name(VocabType type) {
  switch (type) {
    case VocabType::kSentencePiece: return "sentencepiece";
    case VocabType::kSubword: return "subword";
    case VocabType::kByte: return "byte";
    case VocabType::kToken: return "token";
  }
  return "?";
}

std::string vocab_filename(const std::string& problem, const VocabSpec& spec,
                           const std::string& lang) {
  const std::string base = "vocab." + problem + "." + std::to_string(spec.size);
  const std::string suffix = lang.empty() ? "" : "." + lang;
  switch (spec.type) {
    case VocabType::kSubword: return base + ".subwords" + suffix;
    case VocabType::kSentencePiece: return base + ".spm" + suffix + ".model";
    case VocabType::kToken: return base + ".tokens" + suffix;
    case VocabType::kByte: return "";
  }
  return "";
}

bool vocab_exists(const std::string& path, const VocabSpec& spec) {
  return spec.type == VocabType::kByte || fs::exists(path);
}

std::shared_ptr<TextEncoder> load_vocab(const std::string& path, const VocabSpec& spec) {
  switch (spec.type) {
    case VocabType::kByte: return std::make_shared<ByteTextEncoder>();
    case VocabType::kSubword:
      return std::make_shared<SubwordTextEncoder>(SubwordTextEncoder::load(path));
    case VocabType::kSentencePiece: return std::make_shared<SentencePieceEncoder>(path);
    case VocabType::kToken: {
      std::optional<std::string> oov;
      if (file_lists_token(path, kUnknownToken)) oov = kUnknownToken;
      return std::make_shared<TokenTextEncoder>(TokenTextEncoder::from_file(path, oov));
    }
  }
  throw Error("unsupported vocabulary type");
}

std::shared_ptr<TextEncoder> learn_vocab(const std::vector<std::string>& sample,
                                         const VocabSpec& spec, const std::string& path,
                                         int threads) {
  switch (spec.type) {
    case VocabType::kByte: return std::make_shared<ByteTextEncoder>();
    case VocabType::kSubword: {
      auto enc = SubwordTextEncoder::build_from_corpus(
          sample, spec.size, static_cast<int>(spec.max_subtoken_length));
      enc.store_to_file(path);
      return std::make_shared<SubwordTextEncoder>(std::move(enc));
    }
    case VocabType::kSentencePiece: {
      SentencePieceOptions options;
      options.model_type = spec.model_type;
      options.vocab_size = static_cast<int>(spec.size);
      options.num_threads = threads;
      options.user_defined_symbols = spec.whole_words;
      // A small corpus may not fill the requested size; take what it has.
      options.hard_vocab_limit = false;
      // Byte pieces, so that no character is lost to <unk>, where they take
      // at most a quarter of the ids; a smaller vocabulary keeps its room
      // for real pieces.
      options.byte_fallback = spec.size >= kMinByteFallbackVocab;
      if (!options.byte_fallback)
        spdlog::info("{}: a vocabulary of {} is too small for 256 byte pieces (it takes them "
                     "from {}); characters it lacks will read as <unk>", path, spec.size,
                     kMinByteFallbackVocab);
      return std::make_shared<SentencePieceEncoder>(
          SentencePieceEncoder::train(sample, strip_suffix(path, ".model"), options));
    }
    case VocabType::kToken: {
      // The most frequent whitespace tokens; everything else reads as <unk>.
      std::unordered_map<std::string, int64_t> counts;
      for (const auto& s : sample)
        for (const auto& t : split(s, ' '))
          if (!t.empty()) ++counts[t];
      std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
      std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
      });
      std::vector<std::string> tokens{kUnknownToken};
      for (const auto& [t, c] : sorted) {
        if (static_cast<int64_t>(tokens.size()) + 2 >= spec.size) break;
        tokens.push_back(t);
      }
      auto enc = TokenTextEncoder::from_list(tokens, std::string(kUnknownToken));
      enc.store_to_file(path);
      return std::make_shared<TokenTextEncoder>(std::move(enc));
    }
  }
  throw Error("unsupported vocabulary type");
}

}  // namespace t2t
