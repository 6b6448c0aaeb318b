// Terminology glossaries: loading (comments, blanks, CRLF, a BOM, errors
// naming the line), and matching source terms as whole word sequences:
// longest wins, Chinese, duplicates once, never inside a word, and a large
// glossary.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/translate/glossary.h"
#include "tests/support/test_util.h"

namespace {

using t2t::Glossary;
using t2t::GlossaryEntry;
using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("a glossary file loads, skipping comments and blank lines", "[glossary]") {
  t2t::test::TempDir dir("glossary_load");
  const std::string path = dir / "terms.tsv";
  t2t::test::write_text(path,
                        "\xEF\xBB\xBF# English to German\n"
                        "cat\tKatze\r\n"
                        "\n"
                        "   \t \n"
                        "# a comment\tnot an entry\n"
                        "  machine learning \t maschinelles Lernen\n"
                        "北京\tPeking");  // no final newline
  const Glossary g = Glossary::load(path);
  REQUIRE(g.size() == 3);
  CHECK_FALSE(g.empty());
  CHECK(g.entries()[0].source == "cat");
  CHECK(g.entries()[0].target == "Katze");
  CHECK(g.entries()[1].source == "machine learning");
  CHECK(g.entries()[1].target == "maschinelles Lernen");
  CHECK(g.targets_for("Machine learning: a cat in 北京.") == Strings{"Katze", "Peking"});

  const Glossary none;
  CHECK(none.empty());
  CHECK(none.targets_for("cat").empty());
}

TEST_CASE("glossary errors name the file and line, or the entry", "[glossary]") {
  t2t::test::TempDir dir("glossary_errors");
  const auto load = [&](const std::string& text) {
    t2t::test::write_text(dir / "g.tsv", text);
    return Glossary::load(dir / "g.tsv");
  };
  const std::string at = dir / "g.tsv";
  CHECK_THROWS_WITH(load("a\tb\n# c\nno tab here\n"),
                    Catch::StartsWith(at + ":3: the line has no TAB") &&
                        Catch::Contains("source term<TAB>target term"));
  CHECK_THROWS_WITH(load("a\tb\tc\n"),
                    Catch::StartsWith(at + ":1: the line has more than one TAB"));
  CHECK_THROWS_WITH(load("a\tb\ncat\t  \n"),
                    Catch::StartsWith(at + ":2: the target term is empty"));
  CHECK_THROWS_WITH(load("\tKatze\n"), Catch::StartsWith(at + ":1: the source term is empty"));
  CHECK_THROWS_WITH(load("ok\tgut\nbad\xFF\tschlecht\n"),
                    Catch::StartsWith(at + ":2: the line is not valid UTF-8"));
  CHECK_THROWS_WITH(Glossary::load(dir / "missing.tsv"),
                    Catch::Contains("missing.tsv") && Catch::Contains("No such file"));
  CHECK_THROWS_WITH(Glossary::load(dir.path.string()), Catch::Contains("is a directory"));

  CHECK_THROWS_WITH(Glossary::from_entries({{"cat", "Katze"}, {"dog", " "}}),
                    Catch::StartsWith("glossary entry 2: the target term is empty"));
  CHECK_THROWS_WITH(Glossary::from_entries({{"\xC3", "x"}}),
                    Catch::StartsWith("glossary entry 1: the source term is not valid UTF-8"));
}

TEST_CASE("where terms overlap the longer one wins", "[glossary]") {
  const Glossary g = Glossary::from_entries({{"New York", "纽约"},
                                             {"York", "约克"},
                                             {"New York Times", "纽约时报"},
                                             {"Times", "泰晤士"}});
  CHECK(g.targets_for("The New York Times reported from York.") == Strings{"纽约时报", "约克"});
  CHECK(g.targets_for("New York is big. Times change.") == Strings{"纽约", "泰晤士"});
  // Spacing does not matter; words are compared one by one.
  CHECK(g.targets_for("New   York") == Strings{"纽约"});
  CHECK(g.targets_for("New\tYork\tTimes") == Strings{"纽约时报"});

  // Between overlapping terms of equal length the earlier one wins; a
  // shorter term beside them is still found.
  const Glossary ml = Glossary::from_entries({{"machine learning", "maschinelles Lernen"},
                                              {"learning rate", "Lernrate"},
                                              {"deep", "tief"}});
  CHECK(ml.targets_for("deep machine learning rate") == Strings{"tief", "maschinelles Lernen"});
  CHECK(ml.targets_for("the learning rate") == Strings{"Lernrate"});
}

TEST_CASE("Chinese source terms match character by character", "[glossary]") {
  const Glossary g = Glossary::from_entries(
      {{"北京", "Beijing"}, {"北京大学", "Peking University"}, {"大学", "university"}});
  CHECK(g.targets_for("我在北京大学学习，北京很大。") == Strings{"Peking University", "Beijing"});
  CHECK(g.targets_for("这所大学在北京") == Strings{"university", "Beijing"});
  CHECK(g.targets_for("北方").empty());
}

TEST_CASE("each target term is listed once", "[glossary]") {
  const Glossary g = Glossary::from_entries({{"cat", "Katze"},
                                             {"kitty", "Katze"},
                                             {"cat", "Katze"},
                                             {"bank", "Bank"},
                                             {"bank", "Ufer"}});
  CHECK(g.size() == 5);
  CHECK(g.targets_for("cat, kitty and cat") == Strings{"Katze"});
  // Entries with the same source term come in file order.
  CHECK(g.targets_for("the bank of the cat") == Strings{"Bank", "Ufer", "Katze"});
}

TEST_CASE("terms never match inside a word, and case counts", "[glossary]") {
  const Glossary g = Glossary::from_entries({{"cat", "Katze"}, {"e-mail", "E-Mail"}});
  CHECK(g.targets_for("category").empty());
  CHECK(g.targets_for("concat").empty());
  CHECK(g.targets_for("Cat").empty());
  CHECK(g.targets_for("the cat's toy") == Strings{"Katze"});
  CHECK(g.targets_for("(cat)") == Strings{"Katze"});
  CHECK(g.targets_for("send an e-mail") == Strings{"E-Mail"});
  CHECK(g.targets_for("e-mails").empty());
  // Punctuation runs are words too: "e-" is no match for "e-mail".
  CHECK(g.targets_for("e--mail").empty());
}

TEST_CASE("a glossary of 100k terms is indexed, not scanned", "[glossary]") {
  std::vector<GlossaryEntry> entries;
  for (int i = 0; i < 100000; ++i) {
    // Many terms share their first word: "w7 x0", "w7 x1 y", ...
    const std::string first = "w" + std::to_string(i % 100);
    std::string source = first + " x" + std::to_string(i / 100);
    if (i % 3 == 0) source += " y";
    entries.push_back({source, "T" + std::to_string(i)});
  }
  entries.push_back({"w7", "W7"});
  const Glossary g = Glossary::from_entries(std::move(entries));
  CHECK(g.size() == 100001);
  // Entry 207 is "w7 x2 y" (207 % 3 == 0); the lone "w7" loses to it first.
  CHECK(g.targets_for("w7 x2 y then w7 alone") == Strings{"T207", "W7"});
  CHECK(g.targets_for("w8 x2 y") == Strings{"T208"});  // 208 % 3 != 0: no "y" in its term
  CHECK(g.targets_for("w8 x2y").empty());
  std::string text;
  Strings expected;
  bool w7_listed = false;
  for (int i = 0; i < 2000; ++i) {
    text += "w" + std::to_string(i % 100) + " x" + std::to_string(i) + " ";
    const int id = i * 100 + i % 100;  // the entry "w(i % 100) x(i)", if any
    if (id < 100000 && id % 3 != 0) {
      expected.push_back("T" + std::to_string(id));
    } else if (i % 100 == 7 && !w7_listed) {
      expected.push_back("W7");
      w7_listed = true;
    }
  }
  CHECK(g.targets_for(text) == expected);
}
