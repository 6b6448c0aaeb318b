#include "t2t/core/string_util.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace t2t {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

namespace {
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

std::string camelcase_to_snakecase(std::string_view name) {
  // Pass 1, T2T's r"(.)([A-Z][a-z0-9]+)" -> r"\1_\2": before an upper-case
  // letter followed by a lower-case letter or digit, when something precedes.
  std::string s1;
  for (size_t i = 0; i < name.size(); ++i) {
    bool starts_word = i > 0 && is_upper(name[i]) && i + 1 < name.size() &&
                       (is_lower(name[i + 1]) || is_digit(name[i + 1]));
    // The regex consumes its matches, so a character that ended the previous
    // match cannot be the "(.)" of the next; that character is then always
    // [a-z0-9] and pass 2 inserts the same underscore, so the result agrees.
    if (starts_word) s1 += '_';
    s1 += name[i];
  }
  // Pass 2, r"([a-z0-9])([A-Z])" -> r"\1_\2".
  std::string s2;
  for (size_t i = 0; i < s1.size(); ++i) {
    if (i > 0 && is_upper(s1[i]) && (is_lower(s1[i - 1]) || is_digit(s1[i - 1]))) s2 += '_';
    s2 += s1[i];
  }
  return to_lower(s2);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> close_matches(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       size_t max_results) {
  const std::string lname = to_lower(name);
  const size_t budget = std::max<size_t>(2, lname.size() / 3);
  std::vector<std::tuple<size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = to_lower(c);
    size_t d = edit_distance(lname, lc);
    bool contains = lname.size() >= 4 &&
                    (lc.find(lname) != std::string::npos || lname.find(lc) != std::string::npos);
    if (d <= budget || contains) scored.emplace_back(contains ? std::min(d, budget) : d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() == max_results) break;
    out.push_back(c);
  }
  return out;
}

}  // namespace t2t
