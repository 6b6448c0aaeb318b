#include "t2t/text/tokenizer.h"

#include <glob.h>

#include <algorithm>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/text/unicode.h"
#include "t2t/text/utf8.h"

namespace t2t {

// ---- Tokenizer ------------------------------------------------------------

namespace tokenizer {

namespace {

// is_alnum is exported from the shared library, so calls to it are not
// inlined; the per-character loops below save a call per character by
// using this instead.
inline bool alnum_char(char32_t c) { return unicode::in_class(c, unicode::kUcdAlnum); }

}  // namespace

bool is_alnum(char32_t c) { return alnum_char(c); }

std::vector<std::u32string_view> encode(std::u32string_view text) {
  std::vector<std::u32string_view> tokens;
  if (text.empty()) return tokens;
  size_t start = 0;
  bool prev = alnum_char(text[0]);
  for (size_t pos = 1; pos < text.size(); ++pos) {
    const bool cur = alnum_char(text[pos]);
    if (cur == prev) continue;
    const std::u32string_view token = text.substr(start, pos - start);
    if (start == 0 || !(token.size() == 1 && token[0] == U' ')) tokens.push_back(token);
    start = pos;
    prev = cur;
  }
  tokens.push_back(text.substr(start));
  return tokens;
}

std::vector<std::string> encode(std::string_view utf8_text) {
  const std::u32string text = utf8_to_u32(utf8_text);
  std::vector<std::string> out;
  for (std::u32string_view t : encode(std::u32string_view(text))) out.push_back(u32_to_utf8(t));
  return out;
}

std::u32string decode(const std::vector<std::u32string>& tokens) {
  std::u32string out;
  bool prev_alnum = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool alnum = !tokens[i].empty() && alnum_char(tokens[i][0]);
    if (i > 0 && prev_alnum && alnum) out.push_back(U' ');
    out += tokens[i];
    prev_alnum = alnum;
  }
  return out;
}

std::string decode(const std::vector<std::string>& tokens) {
  std::string out;
  bool prev_alnum = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    bool alnum = false;
    if (!t.empty()) {
      const Utf8Char first = decode_utf8_front(t);
      alnum = first.ok && alnum_char(first.cp);
    }
    if (i > 0 && prev_alnum && alnum) out.push_back(' ');
    out += t;
    prev_alnum = alnum;
  }
  return out;
}

}  // namespace tokenizer

// ---- Token counts ---------------------------------------------------------

namespace {

void count_tokens_u32(std::u32string_view text, TokenCounts& counts) {
  for (std::u32string_view t : tokenizer::encode(text)) ++counts[u32_to_utf8(t)];
}

}  // namespace

void count_tokens(std::string_view utf8_text, TokenCounts& counts) {
  const std::u32string text = utf8_to_u32(utf8_text);
  count_tokens_u32(text, counts);
}

TokenCounts count_tokens(const std::vector<std::string>& texts) {
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t n_threads = std::min<size_t>({hw, 16, texts.size() / 2048 + 1});
  std::vector<TokenCounts> partial(n_threads);
  auto work = [&](size_t t) {
    for (size_t i = t; i < texts.size(); i += n_threads) count_tokens(texts[i], partial[t]);
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n_threads; ++t) threads.emplace_back(work, t);
  work(0);
  for (auto& th : threads) th.join();
  TokenCounts counts = std::move(partial[0]);
  for (size_t t = 1; t < n_threads; ++t) {
    for (auto& [token, n] : partial[t]) counts[token] += n;
  }
  return counts;
}

TokenCounts corpus_token_counts(const std::string& file_pattern, int64_t max_lines,
                                bool split_on_newlines) {
  glob_t g{};
  const int rc = ::glob(file_pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> files;
  if (rc == 0) files.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
  ::globfree(&g);
  if (files.empty()) {
    throw Error("no file matches '" + file_pattern +
                "'; check the path (it is a glob pattern, e.g. 'data/train.*')");
  }
  std::sort(files.begin(), files.end());

  TokenCounts counts;
  int64_t lines_read = 0;
  for (const std::string& path : files) {
    const std::string content = read_file(path);
    size_t pos = 0;
    std::string doc;  // used when not splitting on newlines
    while (pos < content.size()) {
      size_t nl = content.find('\n', pos);
      const size_t end = (nl == std::string::npos) ? content.size() : nl + 1;
      const std::string_view line(content.data() + pos, end - pos);
      pos = end;
      if (split_on_newlines) {
        const std::u32string text = utf8_to_u32(line);
        count_tokens_u32(python_strip(text), counts);
      } else {
        doc.append(line);
      }
      ++lines_read;
      if (max_lines > 0 && lines_read >= max_lines) {
        if (!split_on_newlines) count_tokens(doc, counts);
        return counts;
      }
    }
    if (!split_on_newlines) count_tokens(doc, counts);
  }
  return counts;
}

}  // namespace t2t
