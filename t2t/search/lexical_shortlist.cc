#include "t2t/search/lexical_shortlist.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/text/text_encoder.h"

namespace t2t {
namespace {

std::string key_of(const int64_t* ids, size_t n) {
  return std::string(reinterpret_cast<const char*>(ids), n * sizeof(int64_t));
}

std::vector<int64_t> ids_of(const std::string& key) {
  std::vector<int64_t> ids(key.size() / sizeof(int64_t));
  std::memcpy(ids.data(), key.data(), ids.size() * sizeof(int64_t));
  return ids;
}

void check_id(int64_t id, int64_t size, const char* side) {
  if (id < 0 || id >= size)
    throw Error(std::string("lexical shortlist: ") + side + " id " + std::to_string(id) +
                " is outside its vocabulary [0, " + std::to_string(size) + ")");
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Whitespace-separated fields of `line`.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::string where(const std::string& path, int64_t line) {
  return path + " line " + std::to_string(line);
}

}  // namespace

LexicalShortlist::LexicalShortlist(int64_t source_vocab_size, int64_t target_vocab_size)
    : source_vocab_size_(source_vocab_size), target_vocab_size_(target_vocab_size) {}

void LexicalShortlist::set_frequent(std::vector<Target> targets) {
  for (const Target& t : targets) check_id(t.id, target_vocab_size_, "target");
  frequent_ = std::move(targets);
}

void LexicalShortlist::add(const std::vector<int64_t>& source_ngram, std::vector<Target> targets) {
  if (source_ngram.empty()) throw Error("lexical shortlist: an entry's source n-gram is empty");
  for (int64_t id : source_ngram) check_id(id, source_vocab_size_, "source");
  for (const Target& t : targets) check_id(t.id, target_vocab_size_, "target");
  if (rules_.size() < source_ngram.size()) rules_.resize(source_ngram.size());
  rules_[source_ngram.size() - 1][key_of(source_ngram.data(), source_ngram.size())] =
      std::move(targets);
}

const std::vector<LexicalShortlist::Target>* LexicalShortlist::targets(const int64_t* ngram,
                                                                       size_t n) const {
  if (n == 0 || n > rules_.size()) return nullptr;
  const auto& rules = rules_[n - 1];
  const auto at = rules.find(key_of(ngram, n));
  return at == rules.end() ? nullptr : &at->second;
}

std::vector<std::pair<std::vector<int64_t>, const std::vector<LexicalShortlist::Target>*>>
LexicalShortlist::entries() const {
  std::vector<std::pair<std::vector<int64_t>, const std::vector<Target>*>> out;
  for (const auto& rules : rules_)
    for (const auto& [key, targets] : rules) out.emplace_back(ids_of(key), &targets);
  return out;
}

size_t LexicalShortlist::size() const {
  size_t n = 0;
  for (const auto& rules : rules_) n += rules.size();
  return n;
}

OutputColumns LexicalShortlist::columns(const std::vector<const std::vector<int64_t>*>& sources,
                                        const std::vector<int64_t>& extra,
                                        const ShortlistLimits& limits) const {
  std::vector<char> in(static_cast<size_t>(target_vocab_size_), 0);
  auto take = [&](const std::vector<Target>& targets, int64_t count) {
    const size_t n = count < 0 ? targets.size()
                               : std::min(targets.size(), static_cast<size_t>(count));
    for (size_t i = 0; i < n; ++i) in[targets[i].id] = 1;
  };
  take(frequent_, limits.frequent);
  for (int64_t id = 0; id < std::min<int64_t>(kNumReservedIds, target_vocab_size_); ++id) in[id] = 1;
  for (int64_t id : extra) {
    check_id(id, target_vocab_size_, "target");
    in[id] = 1;
  }
  const int64_t best = limits.best > 0 ? limits.best : -1;
  for (const auto* source : sources) {
    // The words of a source: its ids up to EOS, without padding.
    std::vector<int64_t> words;
    for (int64_t id : *source) {
      if (id == kEosId) break;
      if (id != kPadId) words.push_back(id);
    }
    for (size_t n = 1; n <= rules_.size(); ++n)
      for (size_t i = 0; i + n <= words.size(); ++i)
        if (const auto* targets = this->targets(words.data() + i, n)) take(*targets, best);
  }
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < target_vocab_size_; ++id)
    if (in[id]) ids.push_back(id);
  if (static_cast<int64_t>(ids.size()) == target_vocab_size_) return OutputColumns();
  return OutputColumns(std::move(ids), target_vocab_size_);
}

ShortlistTokens::ShortlistTokens(std::vector<std::string> names)
    : size_(static_cast<int64_t>(names.size())), names_(std::move(names)) {
  for (size_t i = 0; i < names_.size(); ++i) index_.emplace(names_[i], static_cast<int64_t>(i));
}

ShortlistTokens ShortlistTokens::ids(int64_t vocab_size) {
  ShortlistTokens t;
  t.size_ = vocab_size;
  t.by_id_ = true;
  return t;
}

int64_t ShortlistTokens::id(std::string_view token) const {
  if (!by_id_) {
    const auto at = index_.find(std::string(token));
    return at == index_.end() ? -1 : at->second;
  }
  if (token.size() < 6 || token.substr(0, 4) != "<id_" || token.back() != '>') return -1;
  const std::string_view digits = token.substr(4, token.size() - 5);
  if (digits.empty() || digits.size() > 18 || (digits.size() > 1 && digits[0] == '0')) return -1;
  int64_t id = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    id = id * 10 + (c - '0');
  }
  return id < size_ ? id : -1;
}

bool ShortlistTokens::writable(int64_t id) const {
  if (id < 0 || id >= size_) return false;
  if (by_id_) return true;
  const std::string& name = names_[static_cast<size_t>(id)];
  return !name.empty() &&
         std::none_of(name.begin(), name.end(), [](char c) { return is_space(c) || c == '\n'; });
}

std::string ShortlistTokens::name(int64_t id) const {
  if (id < 0 || id >= size_)
    throw Error("lexical shortlist: id " + std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(size_) + ")");
  if (by_id_) return "<id_" + std::to_string(id) + ">";
  const std::string& name = names_[static_cast<size_t>(id)];
  if (!writable(id))
    throw Error("lexical shortlist: token " + std::to_string(id) + " ('" + name +
                "') is empty or holds whitespace, which a shortlist file cannot hold; name "
                "tokens by id (<id_N>) instead");
  return name;
}

ShortlistFormat parse_shortlist_format(const std::string& name, const std::string& option) {
  if (name == "vmap") return ShortlistFormat::kVmap;
  if (name == "marian") return ShortlistFormat::kMarian;
  throw OptionError(option, "{" + option + "}=" + name + " is not a shortlist format: use vmap "
                            "(CTranslate2's, t2t's own) or marian");
}

namespace {

void read_vmap(std::string_view text, const std::string& path, const ShortlistTokens& source,
               const ShortlistTokens& target, LexicalShortlist& out, ShortlistReadReport& report) {
  int64_t line_no = 0;
  bool have_frequent = false;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos)
      throw Error(where(path, line_no) + ": no tab between the source n-gram and its targets "
                  "(a vmap line is \"src_1 ... src_n<TAB>tgt_1 ... tgt_k\")");
    if (line.find('\t', tab + 1) != std::string_view::npos)
      throw Error(where(path, line_no) + ": more than one tab");
    std::vector<LexicalShortlist::Target> targets;
    for (std::string_view token : fields(line.substr(tab + 1))) {
      const int64_t id = target.id(token);
      if (id < 0) {
        ++report.unknown_target;
        continue;
      }
      targets.push_back({id, std::numeric_limits<float>::quiet_NaN()});
    }
    const auto words = fields(line.substr(0, tab));
    if (words.empty()) {
      if (have_frequent)
        throw Error(where(path, line_no) + ": a second line of always-allowed targets (an empty "
                    "source n-gram)");
      have_frequent = true;
      out.set_frequent(std::move(targets));
      continue;
    }
    std::vector<int64_t> ngram;
    for (std::string_view token : words) ngram.push_back(source.id(token));
    if (std::find(ngram.begin(), ngram.end(), -1) != ngram.end()) {
      ++report.unknown_source;
      continue;
    }
    if (ngram.size() > 16)
      throw Error(where(path, line_no) + ": a source n-gram of " + std::to_string(ngram.size()) +
                  " tokens; at most 16 are taken");
    out.add(ngram, std::move(targets));
  }
  report.lines = line_no;
}

float parse_probability(std::string_view text, const std::string& at) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double p = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno != 0 || !std::isfinite(p) || p < 0 || p > 1)
    throw Error(at + ": '" + s + "' is not a probability in [0, 1]");
  return static_cast<float>(p);
}

void read_marian(std::string_view text, const std::string& path, const ShortlistTokens& source,
                 const ShortlistTokens& target, const ShortlistReadOptions& options,
                 LexicalShortlist& out, ShortlistReadReport& report) {
  if (options.marian_first < 0)
    throw Error("lexical shortlist: Marian's first count must be >= 0, not " +
                std::to_string(options.marian_first));
  std::map<int64_t, std::vector<LexicalShortlist::Target>> by_source;
  int64_t line_no = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    const auto f = fields(line);
    if (f.empty()) continue;
    if (f.size() != 3)
      throw Error(where(path, line_no) + ": " + std::to_string(f.size()) +
                  " fields; Marian's shortlist has \"target source probability\" per line");
    const float p = parse_probability(f[2], where(path, line_no));
    if (f[0] == "NULL" || f[1] == "NULL" || p < options.marian_threshold) continue;
    const int64_t s = source.id(f[1]), t = target.id(f[0]);
    if (s < 0) {
      ++report.unknown_source;
      continue;
    }
    if (t < 0) {
      ++report.unknown_target;
      continue;
    }
    by_source[s].push_back({t, p});
  }
  for (auto& [s, targets] : by_source) {
    std::stable_sort(targets.begin(), targets.end(),
                     [](const auto& a, const auto& b) { return a.score > b.score; });
    out.add({s}, std::move(targets));
  }
  std::vector<LexicalShortlist::Target> first;
  for (int64_t id = 0; id < std::min(options.marian_first, target.vocab_size()); ++id)
    first.push_back({id, std::numeric_limits<float>::quiet_NaN()});
  out.set_frequent(std::move(first));
  report.lines = line_no;
}

}  // namespace

LexicalShortlist read_shortlist(const std::string& path, const ShortlistTokens& source,
                                const ShortlistTokens& target, const ShortlistReadOptions& options,
                                ShortlistReadReport* report) {
  const std::string text = read_file(path);
  LexicalShortlist out(source.vocab_size(), target.vocab_size());
  ShortlistReadReport own;
  try {
    if (options.format == ShortlistFormat::kVmap)
      read_vmap(text, path, source, target, out, own);
    else
      read_marian(text, path, source, target, options, out, own);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    throw Error(path + ": " + what);
  }
  if (report) *report = own;
  return out;
}

void write_shortlist(const LexicalShortlist& shortlist, const std::string& path,
                     ShortlistFormat format, const ShortlistTokens& source,
                     const ShortlistTokens& target) {
  auto entries = shortlist.entries();
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  if (format == ShortlistFormat::kVmap) {
    auto targets = [&](const std::vector<LexicalShortlist::Target>& list) {
      for (size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out += ' ';
        out += target.name(list[i].id);
      }
      out += '\n';
    };
    out += '\t';
    targets(shortlist.frequent());
    for (const auto& [ngram, list] : entries) {
      for (size_t i = 0; i < ngram.size(); ++i) {
        if (i > 0) out += ' ';
        out += source.name(ngram[i]);
      }
      out += '\t';
      targets(*list);
    }
  } else {
    char number[32];
    for (const auto& [ngram, list] : entries) {
      if (ngram.size() != 1)
        throw Error("lexical shortlist: Marian's format holds single source tokens only; this "
                    "shortlist has " + std::to_string(ngram.size()) + "-grams (write it as vmap)");
      const std::string s = source.name(ngram[0]);
      for (size_t i = 0; i < list->size(); ++i) {
        const auto& t = (*list)[i];
        const double p = std::isnan(t.score) ? 1.0 / static_cast<double>(i + 1) : t.score;
        std::snprintf(number, sizeof number, "%.6g", p);
        out += target.name(t.id) + ' ' + s + ' ' + number + '\n';
      }
    }
  }
  write_file_atomic(path, out);
}

}  // namespace t2t
