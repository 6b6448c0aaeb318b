// Every flag a command accepts is read: the flags a command has no use for
// (shared ones, and T2T's own that its users pass out of habit) are refused
// with exit status 2 and a message that says what to do instead. Each
// binary lists them under --help; every one listed is tried here.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "tests/support/test_util.h"

using t2t::test::run_command;

namespace {

const char kHeader[] = "T2T flags refused here";

struct HelpRefusals {
  std::string options;                       // the help above the refused flags
  std::map<std::string, std::string> first;  // refused flag -> first line of its reason
};

// The refused flags that `tool --help` lists, each with the first line of
// its reason.
HelpRefusals refusals_in_help(const std::string& tool) {
  const auto r = run_command("./" + tool + " --help");
  REQUIRE(r.exit_code == 0);
  HelpRefusals out;
  const size_t at = r.output.find(kHeader);
  out.options = r.output.substr(0, at);
  if (at == std::string::npos) return out;
  std::string flag;
  size_t pos = r.output.find('\n', at);
  while (pos != std::string::npos && pos + 1 < r.output.size()) {
    const size_t end = r.output.find('\n', pos + 1);
    const std::string line = r.output.substr(pos + 1, end - pos - 1);
    pos = end;
    if (line.rfind("  --", 0) == 0) {
      flag = line.substr(4);
    } else if (line.rfind("      ", 0) == 0 && !flag.empty() && !out.first.count(flag)) {
      out.first[flag] = line.substr(6);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("each refused flag of each binary is an error that says why", "[refused]") {
  // The ones T2T users pass most; the binaries must list them.
  const std::map<std::string, std::vector<std::string>> expected = {
      {"t2t-trainer", {"tmp_dir", "generate_data", "worker_replicas"}},
      {"t2t-decoder", {"tmp_dir", "decode_shards"}},
      {"t2t-serve", {"tmp_dir", "random_seed"}},
      {"t2t-bleu", {"random_seed", "threads", "t2t_usr_dir"}},
      {"t2t-avg-all", {"random_seed"}},
      {"t2t-datagen", {}},
      {"t2t-translate-all", {}},
      {"t2t-import", {"tmp_dir", "random_seed", "device"}},
      {"t2t-shortlist", {"tmp_dir", "random_seed", "threads"}},
  };
  for (const auto& [tool, must] : expected) {
    const HelpRefusals help = refusals_in_help(tool);
    for (const auto& flag : must) {
      INFO(tool << " --" << flag);
      CHECK(help.first.count(flag) == 1);
    }
    if (must.empty()) CHECK(help.first.empty());
    bool bare = true;  // the first flag also bare, as T2T's booleans come
    for (const auto& [flag, reason] : help.first) {
      INFO(tool << " --" << flag << ": " << reason);
      // Not among the flags the command reads...
      CHECK(help.options.find("--" + flag + " ") == std::string::npos);
      // ...and refused.
      const auto r = run_command("./" + tool + " --" + flag + (bare ? "" : "=x"));
      bare = false;
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.output, Catch::Contains(tool + ": error: --" + flag + " " + reason));
    }
  }
}

TEST_CASE("the flags a command reads stay", "[refused]") {
  CHECK_THAT(refusals_in_help("t2t-datagen").options,
             Catch::Contains("--tmp_dir ") && Catch::Contains("--random_seed ") &&
                 Catch::Contains("--threads "));
  CHECK_THAT(refusals_in_help("t2t-decoder").options,
             Catch::Contains("--random_seed ") && Catch::Contains("--threads "));
  CHECK_THAT(refusals_in_help("t2t-avg-all").options, Catch::Contains("--threads "));
  // A refused flag is refused before anything else is looked at.
  const auto r = run_command("./t2t-trainer --problem=translate_enzh_sample --tmp_dir /tmp");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--tmp_dir does not apply to t2t-trainer"));
}

TEST_CASE("a flag given twice is refused by every binary with both values named", "[refused]") {
  for (const char* binary : {"t2t-datagen", "t2t-trainer", "t2t-decoder", "t2t-serve", "t2t-bleu",
                             "t2t-avg-all", "t2t-translate-all", "t2t-shortlist"}) {
    const auto r = run_command(std::string("./") + binary + " --log_level=info --log_level=error");
    INFO(binary << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--log_level is given 2 times") &&
                             Catch::Contains("--log_level=info, --log_level=error"));
  }
  // A list flag takes every value: t2t-bleu reads both references (here
  // missing, so it names the first), where --translation twice is refused.
  auto bleu = run_command("./t2t-bleu --translation=a --reference=ref.A --reference=ref.B");
  CHECK(bleu.exit_code == 1);
  CHECK_THAT(bleu.output, Catch::Contains("--reference: cannot read 'ref.A'"));
  bleu = run_command("./t2t-bleu --translation=a --translation=b --reference=ref.A");
  CHECK(bleu.exit_code == 2);
  CHECK_THAT(bleu.output, Catch::Contains("--translation is given 2 times"));
}
