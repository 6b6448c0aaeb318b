// UTF-8 and strings of code points, as T2T's and sacreBLEU's Python see
// them: UTF-32 inside (their lengths are in code points), UTF-8 at the
// interfaces; invalid UTF-8 and whitespace as Python takes them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace t2t {

// The code point at the front of some UTF-8 and the bytes it takes. On
// invalid UTF-8 `ok` is false and `len` (>= 1) covers the maximal prefix
// of a valid sequence: the unit Python's decoder drops or replaces.
struct Utf8Char {
  char32_t cp;
  size_t len;
  bool ok;
};
// `text` must not be empty.
Utf8Char decode_utf8_front(std::string_view text);

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);
// Decodes UTF-8 as Python's errors="ignore" does.
std::u32string utf8_to_u32(std::string_view text);
// Invalid subsequences become U+FFFD, as Python's errors="replace" does.
std::string utf8_replace_invalid(std::string_view bytes);
void append_utf8(std::string& out, char32_t c);
std::string u32_to_utf8(std::u32string_view text);

// The lines of a UTF-8 vocabulary file as code points, '\n' removed (a
// final line without one counts). Throws t2t::Error naming `path`, the line
// and `what_is_it` when a line is not valid UTF-8.
std::vector<std::u32string> read_utf8_lines(const std::string& path, const std::string& what_is_it);

// Python's str.isspace(): the characters str.strip() and str.split() use.
bool is_python_space(char32_t c);
std::u32string_view python_strip(std::u32string_view s);
std::u32string_view python_rstrip(std::u32string_view s);
// Python's str.split() with no separator.
std::vector<std::u32string_view> python_split(std::u32string_view s);

}  // namespace t2t
