#include "t2t/text/tokenizer.h"

#include <glob.h>

#include <algorithm>
#include <array>
#include <thread>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"
#include "t2t/text/unicode_alnum_table.h"

namespace t2t {

// ---- UTF-8 ----------------------------------------------------------------

namespace {

struct Utf8Step {
  char32_t cp;
  size_t len;  // bytes consumed
  bool ok;
};

// Decodes one code point at the front of `s`. On invalid input, `len` covers
// the maximal prefix that could have started a valid sequence (at least one
// byte): the unit Python's decoder drops or replaces, so that a valid
// character right after a broken one survives.
Utf8Step utf8_step(const unsigned char* p, size_t n) {
  const unsigned b0 = p[0];
  if (b0 < 0x80) return {b0, 1, true};
  if (b0 < 0xC2 || b0 > 0xF4) return {0, 1, false};
  size_t need;
  unsigned lo = 0x80, hi = 0xBF;
  char32_t cp;
  if (b0 < 0xE0) {
    need = 1;
    cp = b0 & 0x1F;
  } else if (b0 < 0xF0) {
    need = 2;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else {
    need = 3;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  }
  for (size_t i = 1; i <= need; ++i) {
    if (i >= n) return {0, i, false};
    const unsigned b = p[i];
    const unsigned first_lo = (i == 1) ? lo : 0x80;
    const unsigned first_hi = (i == 1) ? hi : 0xBF;
    if (b < first_lo || b > first_hi) return {0, i, false};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, need + 1, true};
}

}  // namespace

std::u32string utf8_to_u32(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0, n = text.size();
  while (i < n) {
    if (p[i] < 0x80) {
      out.push_back(p[i++]);
      continue;
    }
    Utf8Step s = utf8_step(p + i, n - i);
    if (s.ok) out.push_back(s.cp);
    i += s.len;
  }
  return out;
}

std::string utf8_replace_invalid(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0, n = bytes.size();
  while (i < n) {
    Utf8Step s = utf8_step(p + i, n - i);
    if (s.ok) {
      out.append(bytes.data() + i, s.len);
    } else {
      append_utf8(out, 0xFFFD);
    }
    i += s.len;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string u32_to_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

bool is_python_space(char32_t c) {
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string_view python_rstrip(std::u32string_view s) {
  size_t e = s.size();
  while (e > 0 && is_python_space(s[e - 1])) --e;
  return s.substr(0, e);
}

std::u32string_view python_strip(std::u32string_view s) {
  s = python_rstrip(s);
  size_t b = 0;
  while (b < s.size() && is_python_space(s[b])) ++b;
  return s.substr(b);
}

std::vector<std::u32string_view> python_split(std::u32string_view s) {
  std::vector<std::u32string_view> out;
  size_t i = 0, n = s.size();
  while (i < n) {
    while (i < n && is_python_space(s[i])) ++i;
    size_t start = i;
    while (i < n && !is_python_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// ---- Tokenizer ------------------------------------------------------------

namespace tokenizer {

namespace {

// The Basic Multilingual Plane as a bitmap (8 KiB) so the common case is one
// load; rarer planes fall back to a binary search of the ranges.
struct BmpBitmap {
  std::array<uint64_t, 0x10000 / 64> bits{};
  BmpBitmap() {
    for (size_t r = 0; r < kNumAlnumRanges; ++r) {
      const CodepointRange& range = kAlnumRanges[r];
      if (range.lo > 0xFFFF) break;
      const char32_t hi = std::min<char32_t>(range.hi, 0xFFFF);
      for (char32_t c = range.lo; c <= hi; ++c) bits[c >> 6] |= uint64_t{1} << (c & 63);
    }
  }
};

const BmpBitmap& bmp_bitmap() {
  static const BmpBitmap bitmap;
  return bitmap;
}

}  // namespace

bool is_alnum(char32_t c) {
  if (c <= 0xFFFF) return (bmp_bitmap().bits[c >> 6] >> (c & 63)) & 1;
  const CodepointRange* begin = kAlnumRanges;
  const CodepointRange* end = kAlnumRanges + kNumAlnumRanges;
  const CodepointRange* it =
      std::upper_bound(begin, end, c, [](char32_t v, const CodepointRange& r) { return v < r.lo; });
  return it != begin && c <= (it - 1)->hi;
}

std::vector<std::u32string_view> encode(std::u32string_view text) {
  std::vector<std::u32string_view> tokens;
  if (text.empty()) return tokens;
  size_t start = 0;
  bool prev = is_alnum(text[0]);
  for (size_t pos = 1; pos < text.size(); ++pos) {
    const bool cur = is_alnum(text[pos]);
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
    const bool alnum = !tokens[i].empty() && is_alnum(tokens[i][0]);
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
      Utf8Step s = utf8_step(reinterpret_cast<const unsigned char*>(t.data()), t.size());
      alnum = s.ok && is_alnum(s.cp);
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

std::vector<std::u32string> read_utf8_lines(const std::string& path, const std::string& what_is_it) {
  const std::string content = read_file(path);
  std::vector<std::u32string> lines;
  size_t pos = 0;
  while (pos < content.size()) {
    size_t nl = content.find('\n', pos);
    if (nl == std::string::npos) nl = content.size();
    const std::string_view line(content.data() + pos, nl - pos);
    pos = nl + 1;
    if (!is_valid_utf8(line))
      throw Error("vocab file '" + path + "' line " + std::to_string(lines.size() + 1) +
                  " is not valid UTF-8; " + what_is_it);
    lines.push_back(utf8_to_u32(line));
  }
  return lines;
}

}  // namespace t2t
