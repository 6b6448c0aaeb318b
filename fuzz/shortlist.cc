// Lexical shortlists (CTranslate2's vmap, Marian's text shortlist), read for
// two small vocabularies, used for a batch's columns and written back. The
// first byte picks the format and how tokens are named.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/search/lexical_shortlist.h"

namespace {

std::vector<std::string> names(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

}  // namespace

T2T_FUZZ_TARGET(shortlist) {
  if (data.empty()) return;
  const auto mode = static_cast<uint8_t>(data[0]);
  const std::string path = t2t::fuzz::scratch_file("shortlist.txt", data.substr(1));
  const bool by_id = mode & 2;
  const t2t::ShortlistTokens source =
      by_id ? t2t::ShortlistTokens::ids(40) : t2t::ShortlistTokens(names("s", 40));
  const t2t::ShortlistTokens target =
      by_id ? t2t::ShortlistTokens::ids(60) : t2t::ShortlistTokens(names("t", 60));
  t2t::ShortlistReadOptions options;
  options.format = mode & 1 ? t2t::ShortlistFormat::kMarian : t2t::ShortlistFormat::kVmap;
  options.marian_first = (mode >> 2) & 15;
  options.marian_threshold = (mode >> 6) / 4.0;
  try {
    const auto shortlist = t2t::read_shortlist(path, source, target, options);
    const std::vector<int64_t> a = {3, 4, 5, 1, 0}, b = {7, 39, 1};
    t2t::ShortlistLimits limits;
    limits.best = mode >> 5;
    shortlist.columns({&a, &b}, {2, 59}, limits);
    for (const auto format : {t2t::ShortlistFormat::kVmap, t2t::ShortlistFormat::kMarian}) {
      try {
        t2t::write_shortlist(shortlist, t2t::fuzz::scratch_dir() + "/out.txt", format, source,
                             target);
      } catch (const t2t::Error&) {  // n-grams in Marian's format
      }
    }
  } catch (const t2t::Error&) {
  }
}
