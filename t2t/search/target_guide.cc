#include "t2t/search/target_guide.h"

#include "t2t/core/error.h"
#include "t2t/text/text_encoder.h"

namespace t2t {

int64_t TargetGuide::constraint_tokens() const {
  int64_t n = 0;
  for (const auto& phrase : constraints) n += static_cast<int64_t>(phrase.size());
  return n;
}

void check_target_guide(const TargetGuide& guide, const SearchOptions& options,
                        int64_t input_length, const std::string& where) {
  const auto count = static_cast<int64_t>(guide.constraints.size());
  for (size_t q = 0; q < guide.constraints.size(); ++q) {
    if (guide.constraints[q].empty())
      throw OptionError("constraints", where + ": constraint " + std::to_string(q + 1) +
                                           " is empty (a term of no target tokens); drop it");
    for (int64_t id : guide.constraints[q])
      if (id == kEosId || id == kPadId)
        throw OptionError("constraints", where + ": constraint " + std::to_string(q + 1) +
                                             " holds the reserved id " + std::to_string(id));
  }
  for (int64_t id : guide.prefix)
    if (id == kEosId || id == kPadId)
      throw OptionError("prefix", where + ": the {prefix} holds the reserved id " +
                                      std::to_string(id));
  if (count > 0 && options.sampling.draws())
    throw OptionError("constraints", where + ": {constraints} need beam search, not random "
                                             "sampling");
  if (count > 0 && count + 1 > options.beam_size)
    throw OptionError("constraints",
                      where + ": " + std::to_string(count) + " {constraints} need {beam_size} >= " +
                          std::to_string(count + 1) + " (a part of the beam for each number of "
                          "terms met, none included), got {beam_size} " +
                          std::to_string(options.beam_size) +
                          "; raise it or give fewer terms");
  // The decode length as the search works it out (beam_search.h); with T2T's
  // batch-wide rule a sentence can only get longer than this.
  const int64_t limit = input_length + options.extra_length;
  const int64_t needed = static_cast<int64_t>(guide.prefix.size()) + guide.constraint_tokens() + 1;
  if (!guide.empty() && needed > limit)
    throw OptionError(guide.constraints.empty() ? "prefix" : "constraints",
                      where + ": the {prefix} and {constraints} take " +
                          std::to_string(needed - 1) +
                          " target tokens, more than the decode length leaves (" +
                          std::to_string(limit) + " tokens with EOS: the input's " +
                          std::to_string(input_length) + " + {extra_length} " +
                          std::to_string(options.extra_length) + "); shorten them or raise "
                          "{extra_length}");
}

}  // namespace t2t
