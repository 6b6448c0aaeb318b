#include "t2t/text/sentencepiece_encoder.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/logging.h"

namespace t2t {

namespace {

// Feeds training sentences from memory instead of a file.
class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(const std::vector<std::string>& sentences) : sentences_(sentences) {}
  bool done() const override { return pos_ >= sentences_.size(); }
  void Next() override { ++pos_; }
  const std::string& value() const override { return sentences_[pos_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& sentences_;
  size_t pos_ = 0;
};

// Both trainers fail the same way; say what was being trained.
void check_trained(const sentencepiece::util::Status& status, const std::string& what,
                   const SentencePieceOptions& options) {
  if (status.ok()) return;
  throw Error(what + " failed: " + status.ToString() +
              (options.hard_vocab_limit ? " (a smaller vocab_size or more text may help)" : ""));
}

constexpr int kReservedIds = 3;   // <pad>, <EOS>, <unk>
constexpr int kBytePieces = 256;  // <0x00>..<0xFF> with byte_fallback

std::unordered_map<std::string, std::string> trainer_args(const SentencePieceOptions& o) {
  if (o.model_type != "unigram" && o.model_type != "bpe") {
    throw Error("sentencepiece model_type '" + o.model_type +
                "' is not supported; use 'unigram' or 'bpe'");
  }
  if (o.vocab_size < 4) {
    throw Error("sentencepiece vocab_size " + std::to_string(o.vocab_size) +
                " is too small; it needs room for <pad>, <EOS>, <unk> and pieces");
  }
  if (o.byte_fallback && o.vocab_size <= kReservedIds + kBytePieces) {
    throw Error("sentencepiece vocab_size " + std::to_string(o.vocab_size) +
                " leaves no room for pieces beside the 3 reserved ids and the 256 byte "
                "pieces of byte_fallback; it must exceed 259 (512 or more in practice)");
  }
  const int threads = o.num_threads > 0
                          ? o.num_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // SentencePiece logs every step to stderr; keep that for --log_level=debug.
  const bool verbose = spdlog::get_level() <= spdlog::level::debug;
  std::ostringstream coverage;
  coverage << o.character_coverage;
  std::unordered_map<std::string, std::string> args = {
      {"model_type", o.model_type},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"character_coverage", coverage.str()},
      {"input_sentence_size", std::to_string(o.input_sentence_size)},
      {"shuffle_input_sentence", "true"},
      {"num_threads", std::to_string(threads)},
      {"normalization_rule_name", o.normalization_rule_name},
      {"remove_extra_whitespaces", "false"},
      {"hard_vocab_limit", o.hard_vocab_limit ? "true" : "false"},
      {"max_sentence_length", std::to_string(o.max_sentence_length)},
      {"byte_fallback", o.byte_fallback ? "true" : "false"},
      // T2T's reserved ids.
      {"pad_id", "0"},
      {"eos_id", "1"},
      {"unk_id", "2"},
      {"bos_id", "-1"},
      {"pad_piece", "<pad>"},
      {"eos_piece", "<EOS>"},
      {"unk_piece", "<unk>"},
      {"unk_surface", "\xE2\x81\x87"},  // U+2047 without the default's spaces
      {"minloglevel", verbose ? "0" : "2"},
  };
  std::string symbols;
  for (const std::string& s : o.user_defined_symbols) {
    if (s.empty() || s.find_first_of(", \t\n") != std::string::npos)
      throw Error("sentencepiece user-defined symbol '" + s + "' must be one word without commas");
    symbols += (symbols.empty() ? "" : ",") + s;
  }
  if (!symbols.empty()) args["user_defined_symbols"] = symbols;
  return args;
}

// The NormalizerSpec fields the word cache depends on, read from a
// serialized ModelProto (its field 3) by hand: libsentencepiece does not
// install the generated protobuf code. Returns false when the bytes do not
// parse.
struct NormalizerFacts {
  std::string name;              // field 1
  bool add_dummy_prefix = true;  // field 3, default true
};

bool read_varint(std::string_view& in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto b = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    *v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Calls on_field(number, varint value, length-delimited bytes) for each
// field of a message; skips fixed-size ones.
bool for_each_field(std::string_view in,
                    const std::function<void(uint64_t, uint64_t, std::string_view)>& on_field) {
  while (!in.empty()) {
    uint64_t key = 0, v = 0;
    if (!read_varint(in, &key)) return false;
    const uint64_t number = key >> 3;
    switch (key & 7) {
      case 0:
        if (!read_varint(in, &v)) return false;
        on_field(number, v, {});
        break;
      case 1:
        if (in.size() < 8) return false;
        in.remove_prefix(8);
        break;
      case 2:
        if (!read_varint(in, &v) || v > in.size()) return false;
        on_field(number, 0, in.substr(0, v));
        in.remove_prefix(v);
        break;
      case 5:
        if (in.size() < 4) return false;
        in.remove_prefix(4);
        break;
      default: return false;
    }
  }
  return true;
}

bool read_normalizer_facts(std::string_view model_proto, NormalizerFacts* facts) {
  std::string_view spec;
  if (!for_each_field(model_proto, [&](uint64_t n, uint64_t, std::string_view b) {
        if (n == 3) spec = b;
      }))
    return false;
  return for_each_field(spec, [&](uint64_t n, uint64_t v, std::string_view b) {
    if (n == 1) facts->name = std::string(b);
    if (n == 3) facts->add_dummy_prefix = v != 0;
  });
}

// SentencePiece's whitespace symbol, U+2581.
constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

// Text the word cache may split: words separated by single spaces.
bool splits_into_words(std::string_view text) {
  return !text.empty() && text.front() != ' ' && text.back() != ' ' &&
         text.find("  ") == std::string_view::npos;
}

}  // namespace

// Word -> ids, shared by every thread that encodes with this model: 64
// independently locked shards keep contention low. Bounded: once full, new
// words are encoded but not kept (the frequent ones come early and stay).
class SentencePieceEncoder::WordCache {
 public:
  // Words longer than this (URLs, whole Chinese sentences) are not worth
  // keeping: they rarely come again.
  static constexpr size_t kMaxWordBytes = 32;

  void encode(std::string_view text, const sentencepiece::SentencePieceProcessor& sp,
              std::vector<int64_t>* out) {
    std::vector<int> ids;
    for (size_t start = 0;;) {
      const size_t space = std::min(text.find(' ', start), text.size());
      const std::string_view word = text.substr(start, space - start);
      if (word.size() > kMaxWordBytes) {
        encode_word(sp, word, &ids);
        out->insert(out->end(), ids.begin(), ids.end());
      } else {
        Shard& shard = shards_[std::hash<std::string_view>()(word) % kShards];
        const std::string key(word);
        bool found = false;
        {
          std::lock_guard<std::mutex> lock(shard.mutex);
          auto it = shard.words.find(key);
          if (it != shard.words.end()) {
            out->insert(out->end(), it->second.begin(), it->second.end());
            found = true;
          }
        }
        if (!found) {
          encode_word(sp, word, &ids);
          out->insert(out->end(), ids.begin(), ids.end());
          std::lock_guard<std::mutex> lock(shard.mutex);
          if (shard.words.size() < kWordsPerShard) shard.words.emplace(key, ids);
        }
      }
      if (space == text.size()) return;
      start = space + 1;
    }
  }

 private:
  static constexpr size_t kShards = 64;
  static constexpr size_t kWordsPerShard = 4096;  // 256k words, ~30 MB at most

  static void encode_word(const sentencepiece::SentencePieceProcessor& sp, std::string_view word,
                          std::vector<int>* ids) {
    const auto status = sp.Encode(word, ids);
    if (!status.ok()) throw Error("sentencepiece encode failed: " + status.ToString());
  }

  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int>> words;
  };
  std::array<Shard, kShards> shards_;
};

SentencePieceEncoder::SentencePieceEncoder()
    : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}

SentencePieceEncoder::SentencePieceEncoder(const std::string& model_path) : SentencePieceEncoder() {
  if (!std::filesystem::exists(model_path)) {
    throw OptionError("data_dir", "sentencepiece model '" + model_path +
                                      "' does not exist; train one first (or check {data_dir})");
  }
  try {
    const auto status = sp_->Load(model_path);
    if (!status.ok())
      throw Error("cannot load sentencepiece model '" + model_path + "': " + status.ToString());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // SentencePiece's own checks throw for some malformed models (an empty
    // piece in its trie) instead of returning a status.
    throw Error("cannot load sentencepiece model '" + model_path + "': " + e.what());
  }
  init_word_cache();
}

void SentencePieceEncoder::init_word_cache() {
  words_.reset();
  NormalizerFacts facts;
  const std::string proto = sp_->serialized_model_proto();
  if (!read_normalizer_facts(proto, &facts) || facts.name != "identity" ||
      !facts.add_dummy_prefix)
    return;
  // A piece with the space symbol after its start would span words (a model
  // trained with split_by_whitespace=false or treat_whitespace_as_suffix).
  for (int id = 0; id < sp_->GetPieceSize(); ++id) {
    const std::string piece = sp_->IdToPiece(id);
    if (piece.find(kSpaceSymbol, 1) != std::string::npos) return;
  }
  words_ = std::make_unique<WordCache>();
}

SentencePieceEncoder::~SentencePieceEncoder() = default;
SentencePieceEncoder::SentencePieceEncoder(SentencePieceEncoder&&) noexcept = default;
SentencePieceEncoder& SentencePieceEncoder::operator=(SentencePieceEncoder&&) noexcept = default;

void SentencePieceEncoder::load_serialized(const std::string& model_proto,
                                           const std::string& origin) {
  try {
    const auto status = sp_->LoadFromSerializedProto(model_proto);
    if (!status.ok())
      throw Error("sentencepiece produced an unreadable model for '" + origin +
                  "': " + status.ToString());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("sentencepiece produced an unreadable model for '" + origin + "': " + e.what());
  }
  init_word_cache();
}

SentencePieceEncoder SentencePieceEncoder::train(const std::vector<std::string>& sentences,
                                                 const std::string& model_prefix,
                                                 const SentencePieceOptions& options) {
  if (sentences.empty()) {
    throw Error("cannot train sentencepiece model '" + model_prefix + "' on no sentences");
  }
  // The model comes back in memory (SentencePiece refuses a model_prefix
  // then) and is written here, atomically.
  auto args = trainer_args(options);
  sentencepiece::SetRandomGeneratorSeed(options.seed);
  VectorIterator it(sentences);
  std::string model_proto;
  check_trained(sentencepiece::SentencePieceTrainer::Train(args, &it, &model_proto),
                "training sentencepiece model '" + model_prefix + "'", options);
  return from_trained(model_proto, model_prefix);
}

SentencePieceEncoder SentencePieceEncoder::train_from_file(const std::string& text_path,
                                                           const std::string& model_prefix,
                                                           const SentencePieceOptions& options) {
  if (!std::filesystem::exists(text_path)) {
    throw Error("sentencepiece training text '" + text_path + "' does not exist");
  }
  auto args = trainer_args(options);
  args["input"] = text_path;
  sentencepiece::SetRandomGeneratorSeed(options.seed);
  std::string model_proto;
  check_trained(sentencepiece::SentencePieceTrainer::Train(args, nullptr, &model_proto),
                "training sentencepiece model '" + model_prefix + "' on '" + text_path + "'",
                options);
  return from_trained(model_proto, model_prefix);
}

SentencePieceEncoder SentencePieceEncoder::from_trained(const std::string& model_proto,
                                                        const std::string& model_prefix) {
  SentencePieceEncoder enc;
  enc.load_serialized(model_proto, model_prefix);
  enc.write_files(model_proto, model_prefix);
  return enc;
}

void SentencePieceEncoder::write_files(const std::string& model_proto,
                                       const std::string& model_prefix) const {
  // The .vocab file is what spm_train writes: piece, tab, score.
  std::ostringstream vocab;
  for (int id = 0; id < sp_->GetPieceSize(); ++id) {
    vocab << sp_->IdToPiece(id) << '\t' << sp_->GetScore(id) << '\n';
  }
  write_file_atomic(model_prefix + ".model", model_proto);
  write_file_atomic(model_prefix + ".vocab", vocab.str());
}

std::vector<int64_t> SentencePieceEncoder::encode(std::string_view text) const {
  if (words_ && splits_into_words(text)) {
    std::vector<int64_t> ids;
    ids.reserve(text.size() / 3 + 2);
    words_->encode(text, *sp_, &ids);
    return ids;
  }
  return encode_whole(text);
}

std::vector<int64_t> SentencePieceEncoder::encode_whole(std::string_view text) const {
  std::vector<int> ids;
  const auto status = sp_->Encode(text, &ids);
  if (!status.ok()) throw Error("sentencepiece encode failed: " + status.ToString());
  return std::vector<int64_t>(ids.begin(), ids.end());
}

int64_t SentencePieceEncoder::vocab_size() const { return sp_->GetPieceSize(); }

std::string SentencePieceEncoder::decode(const std::vector<int64_t>& ids) const {
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (int64_t id : ids) {
    if (id == kPadId) continue;
    if (id < 0 || id >= vocab_size()) {
      throw Error("sentencepiece: id " + std::to_string(id) + " is outside the vocabulary [0, " +
                  std::to_string(vocab_size()) + "); were these ids made with another model?");
    }
    kept.push_back(static_cast<int>(id));
  }
  std::string text;
  const auto status = sp_->Decode(kept, &text);
  if (!status.ok()) throw Error("sentencepiece decode failed: " + status.ToString());
  return text;
}

std::vector<std::string> SentencePieceEncoder::decode_list(const std::vector<int64_t>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int64_t id : ids) out.push_back(id_to_piece(id));
  return out;
}

std::string SentencePieceEncoder::id_to_piece(int64_t id) const {
  if (id < 0 || id >= vocab_size()) {
    throw Error("sentencepiece: id " + std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(vocab_size()) + ")");
  }
  return sp_->IdToPiece(static_cast<int>(id));
}

}  // namespace t2t
