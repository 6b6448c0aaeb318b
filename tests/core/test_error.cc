// OptionError's templates, quoted inside one another, and the commands a
// message suggests.
#include <catch2/catch.hpp>

#include "t2t/core/error.h"

namespace {
std::string dashes(const std::string& option) { return "--" + option; }
}  // namespace

TEST_CASE("an OptionError quoted in another keeps its names for the front end", "[error]") {
  const t2t::OptionError inner("quantize", "decode it without {quantize}");
  const t2t::OptionError outer("warm_start_from",
                               "{warm_start_from}=x: " + t2t::option_message(inner));
  CHECK(std::string(outer.what()) == "warm_start_from=x: decode it without quantize");
  CHECK(outer.render(dashes) == "--warm_start_from=x: decode it without --quantize");
  // Any other error is quoted as it reads.
  CHECK(t2t::option_message(t2t::Error("disk full")) == "disk full");
}

TEST_CASE("a suggested command is written as typed", "[error]") {
  CHECK(t2t::command_suggestion("t2t-datagen", {{"problem", "p"}, {"data_dir", "d"}}) ==
        "t2t-datagen --problem=p --data_dir=d");
  CHECK(t2t::command_suggestion("t2t-decoder", {{"hparams_set", ""}}) ==
        "t2t-decoder --hparams_set");
}
