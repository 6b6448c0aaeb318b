#include "t2t/text/utf8.h"

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/core/string_util.h"

namespace t2t {

// ---- UTF-8 ----------------------------------------------------------------

namespace {

// decode_utf8_front on the n > 0 bytes at p, kept here so that the loops
// below inline it.
inline Utf8Char utf8_step(const unsigned char* p, size_t n) {
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

// Calls visit(unit, pos) for each code point of `text`, and for each maximal
// invalid subsequence (unit.ok false), front to back; `pos` is where its
// bytes start. Stops, and returns false, as soon as visit returns false.
template <typename Visit>
bool for_each_utf8(std::string_view text, Visit visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Char unit = utf8_step(p + i, text.size() - i);
    if (!visit(unit, i)) return false;
    i += unit.len;
  }
  return true;
}

}  // namespace

Utf8Char decode_utf8_front(std::string_view text) {
  return utf8_step(reinterpret_cast<const unsigned char*>(text.data()), text.size());
}

bool is_valid_utf8(std::string_view text) {
  return for_each_utf8(text, [](const Utf8Char& unit, size_t) { return unit.ok; });
}

std::u32string utf8_to_u32(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for_each_utf8(text, [&](const Utf8Char& unit, size_t) {
    if (unit.ok) out.push_back(unit.cp);
    return true;
  });
  return out;
}

std::string utf8_replace_invalid(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for_each_utf8(bytes, [&](const Utf8Char& unit, size_t pos) {
    if (unit.ok) {
      out.append(bytes.data() + pos, unit.len);
    } else {
      append_utf8(out, 0xFFFD);
    }
    return true;
  });
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

std::vector<std::u32string> read_utf8_lines(const std::string& path,
                                            const std::string& what_is_it) {
  const std::string content = read_file(path);
  std::vector<std::u32string> lines;
  for (std::string_view line : split_lines(content)) {
    if (!is_valid_utf8(line))
      throw Error("vocab file '" + path + "' line " + std::to_string(lines.size() + 1) +
                  " is not valid UTF-8; " + what_is_it);
    lines.push_back(utf8_to_u32(line));
  }
  return lines;
}

// ---- Python's whitespace ----------------------------------------------------

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

}  // namespace t2t
