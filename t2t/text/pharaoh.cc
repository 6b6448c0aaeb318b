#include "t2t/text/pharaoh.h"

#include <limits>

#include "t2t/core/error.h"

namespace t2t {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// A non-negative decimal index, or false.
bool parse_index(std::string_view digits, int64_t& out) {
  if (digits.empty()) return false;
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::string pharaoh(const std::vector<std::pair<int64_t, int64_t>>& hard) {
  std::string out;
  for (const auto& [i, j] : hard) {
    if (!out.empty()) out += ' ';
    out += std::to_string(i) + '-' + std::to_string(j);
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> parse_pharaoh(std::string_view line,
                                                       const std::string& where) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  size_t pos = 0;
  while (pos < line.size()) {
    if (is_blank(line[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < line.size() && !is_blank(line[end])) ++end;
    const std::string_view item = line.substr(pos, end - pos);
    const size_t dash = item.find('-');
    int64_t i = 0, j = 0;
    if (dash == std::string_view::npos || !parse_index(item.substr(0, dash), i) ||
        !parse_index(item.substr(dash + 1), j)) {
      const std::string shown =
          item.size() > 40 ? std::string(item.substr(0, 40)) + "..." : std::string(item);
      throw Error(where + ": '" + shown +
                  "' is not an alignment pair: Pharaoh lines hold SOURCE-TARGET pairs of "
                  "0-based word indices separated by spaces, e.g. '0-0 1-2 2-1'");
    }
    pairs.emplace_back(i, j);
    pos = end;
  }
  return pairs;
}

}  // namespace t2t
