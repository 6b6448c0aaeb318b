// A lexical shortlist narrows each batch's output layer to the target ids
// its sources make likely (CTranslate2's vocabulary map, Marian's lexical
// shortlist): for each source n-gram, the targets it is translated to, best
// first; and targets always allowed, the most frequent first. A batch's
// columns (columns()) are the union over its sentences' n-grams, the
// always-allowed targets, PAD and EOS, and whatever the caller adds (the
// ids of a prefix or of constraints), so a search over them never lacks an
// id it is told to produce.
//
// Files (read_shortlist / write_shortlist; docs in the README):
//  - vmap: CTranslate2's format, t2t's own: one line per source n-gram,
//    "src_1 ... src_n<TAB>tgt_1 ... tgt_k", targets best first; the line
//    with an empty source lists the always-allowed targets.
//  - marian: Marian's text shortlist, one "target source probability" per
//    line; its always-allowed targets are the vocabulary's first ids, so a
//    reader is told how many (`marian_first`) and a writer leaves them out.
// Tokens are named by the vocabularies' own strings, or "<id_N>" as
// tools/export_ctranslate2.py names them in the CTranslate2 models it writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "t2t/search/output_columns.h"

namespace t2t {

// How many of a shortlist's entries a batch takes.
struct ShortlistLimits {
  int64_t best = 0;       // per source n-gram, its first `best` targets; 0: every one listed
  int64_t frequent = -1;  // of the always-allowed targets, the first ones; -1: every one
};

class LexicalShortlist {
 public:
  struct Target {
    int64_t id = 0;
    float score = 0;  // p(target | source) where the file or the counts gave one, else NaN
  };

  LexicalShortlist() = default;
  LexicalShortlist(int64_t source_vocab_size, int64_t target_vocab_size);

  // Entries; ids must fit the vocabularies (t2t::Error otherwise). A source
  // n-gram given twice keeps the later targets.
  void set_frequent(std::vector<Target> targets);
  void add(const std::vector<int64_t>& source_ngram, std::vector<Target> targets);

  const std::vector<Target>& frequent() const { return frequent_; }
  // The targets of one source n-gram, or nullptr when it has none.
  const std::vector<Target>* targets(const int64_t* ngram, size_t n) const;
  // Every source n-gram with its targets, in no particular order.
  std::vector<std::pair<std::vector<int64_t>, const std::vector<Target>*>> entries() const;
  size_t size() const;  // source n-grams
  int64_t max_order() const { return static_cast<int64_t>(rules_.size()); }
  int64_t source_vocab_size() const { return source_vocab_size_; }
  int64_t target_vocab_size() const { return target_vocab_size_; }

  // The columns of a batch whose sources (ids, EOS and padding ignored) are
  // `sources`, with `extra` target ids added; whole() when they would be
  // every id.
  OutputColumns columns(const std::vector<const std::vector<int64_t>*>& sources,
                        const std::vector<int64_t>& extra, const ShortlistLimits& limits) const;

 private:
  int64_t source_vocab_size_ = 0, target_vocab_size_ = 0;
  std::vector<Target> frequent_;
  // rules_[n - 1]: source n-grams (ids as bytes) -> targets.
  std::vector<std::unordered_map<std::string, std::vector<Target>>> rules_;
};

// How a file names the tokens of one vocabulary.
class ShortlistTokens {
 public:
  // By the vocabulary's strings, one per id (TextEncoder::decode_list of
  // every id). Tokens that are empty or hold whitespace cannot be written.
  explicit ShortlistTokens(std::vector<std::string> names);
  // As "<id_N>", N < vocab_size.
  static ShortlistTokens ids(int64_t vocab_size);

  int64_t vocab_size() const { return size_; }
  // The id a file's token names, or -1.
  int64_t id(std::string_view token) const;
  // The token for `id`; throws t2t::Error when it cannot be written in a
  // whitespace-separated file.
  std::string name(int64_t id) const;
  // Whether name(id) can be written.
  bool writable(int64_t id) const;

 private:
  ShortlistTokens() = default;
  int64_t size_ = 0;
  bool by_id_ = false;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int64_t> index_;
};

enum class ShortlistFormat { kVmap, kMarian };

// "vmap" or "marian"; throws OptionError naming `option` otherwise.
ShortlistFormat parse_shortlist_format(const std::string& name, const std::string& option);

struct ShortlistReadOptions {
  ShortlistFormat format = ShortlistFormat::kVmap;
  int64_t marian_first = 100;      // marian: ids [0, first) always allowed
  double marian_threshold = 0.0;   // marian: entries of lower probability dropped
};

// What a read skipped: tokens neither vocabulary has.
struct ShortlistReadReport {
  int64_t lines = 0;
  int64_t unknown_source = 0;  // entries dropped: a source token unknown
  int64_t unknown_target = 0;  // target tokens dropped
};

// Throws t2t::Error naming the file and line of what is malformed.
LexicalShortlist read_shortlist(const std::string& path, const ShortlistTokens& source,
                                const ShortlistTokens& target, const ShortlistReadOptions& options,
                                ShortlistReadReport* report = nullptr);

// Written atomically (temp file, then rename), entries in source-id order.
// Marian's file needs a probability per entry: where a target has none
// (NaN, a vmap read), its rank gives one (1 / rank), so that Marian keeps
// the order; use Marian's threshold 0 with such a file.
void write_shortlist(const LexicalShortlist& shortlist, const std::string& path,
                     ShortlistFormat format, const ShortlistTokens& source,
                     const ShortlistTokens& target);

}  // namespace t2t
