#include <catch2/catch.hpp>

#include "t2t/core/hparams.h"
#include "t2t/core/registry.h"
#include "t2t/data/problem.h"
#include "t2t/model/model_registry.h"

using t2t::Registry;

TEST_CASE("camelcase_to_snakecase follows T2T's rule", "[registry]") {
  using t2t::camelcase_to_snakecase;
  CHECK(camelcase_to_snakecase("TranslateEnzhWmt32k") == "translate_enzh_wmt32k");
  CHECK(camelcase_to_snakecase("TranslateEnzhWmt8k") == "translate_enzh_wmt8k");
  CHECK(camelcase_to_snakecase("TranslateEnzhTatoeba") == "translate_enzh_tatoeba");
  CHECK(camelcase_to_snakecase("Transformer") == "transformer");
  CHECK(camelcase_to_snakecase("LSTMSeq2seqAttention") == "lstm_seq2seq_attention");
  CHECK(camelcase_to_snakecase("ImageCifar10") == "image_cifar10");
  CHECK(camelcase_to_snakecase("HTTPServer") == "http_server");
  CHECK(camelcase_to_snakecase("already_snake") == "already_snake");
}

TEST_CASE("registry adds, finds and lists names", "[registry]") {
  Registry<int> reg("widget");
  reg.add("beta", 2, {"Beta", "b.cc"});
  reg.add("alpha", 1, {"Alpha", "a.cc"});
  CHECK(reg.contains("alpha"));
  CHECK_FALSE(reg.contains("gamma"));
  CHECK(reg.get("beta") == 2);
  CHECK(reg.names() == std::vector<std::string>{"alpha", "beta"});
  CHECK(reg.origin("alpha").file == "a.cc");
}

TEST_CASE("a duplicate registration names both definitions", "[registry]") {
  Registry<int> reg("widget");
  reg.add("dup", 1, {"FirstDup", "first.cc"});
  try {
    reg.add("dup", 2, {"SecondDup", "second.cc"});
    FAIL("no error for a duplicate");
  } catch (const t2t::Error& e) {
    std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("widget 'dup' is registered twice"));
    CHECK_THAT(msg, Catch::Contains("FirstDup (first.cc)"));
    CHECK_THAT(msg, Catch::Contains("SecondDup (second.cc)"));
  }
  CHECK(reg.get("dup") == 1);
}

TEST_CASE("registrars defer duplicate errors to check_registrations", "[registry]") {
  Registry<int> reg("widget");
  t2t::Registrar<int> first(reg, "same", 1, {"One", "one.cc"});
  t2t::Registrar<int> second(reg, "same", 2, {"Two", "two.cc"});
  REQUIRE_THROWS_WITH(t2t::check_registrations(),
                      Catch::Contains("One (one.cc)") && Catch::Contains("Two (two.cc)"));
  // Reported once, then cleared.
  CHECK_NOTHROW(t2t::check_registrations());
}

TEST_CASE("an unknown name suggests close matches", "[registry]") {
  Registry<int> reg("hparams set");
  for (auto n : {"transformer_base", "transformer_big", "transformer_tiny", "lstm_attention"})
    reg.add(n, 0, {n, "x.cc"});
  try {
    reg.get("transformer_bse");
    FAIL("no error for an unknown name");
  } catch (const t2t::OptionError& e) {
    std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("unknown hparams set 'transformer_bse'"));
    CHECK_THAT(msg, Catch::Contains("Did you mean transformer_base"));
    CHECK_THAT(msg, !Catch::Contains("lstm_attention"));
    // The option that takes such a name; a command line spells the others.
    CHECK(e.option() == "hparams_set");
    CHECK_THAT(msg, Catch::Contains("Run with registry_help"));
    CHECK_THAT(e.render([](const std::string& o) { return "--" + o; }),
               Catch::Contains("Run with --registry_help") && Catch::Contains("--t2t_usr_dir."));
  }
  // Nothing close: no suggestion, still a clear message.
  REQUIRE_THROWS_WITH(reg.get("zzz"), !Catch::Contains("Did you mean") &&
                                          Catch::Contains("unknown hparams set 'zzz'"));
}

TEST_CASE("close_matches ranks by edit distance", "[registry]") {
  auto m = t2t::close_matches("transformer_smal",
                              {"transformer_small", "transformer_tiny", "transformer_base"});
  REQUIRE_FALSE(m.empty());
  CHECK(m.front() == "transformer_small");
  CHECK(t2t::edit_distance("kitten", "sitting") == 3);
}

namespace {
class RegistryTestProblem : public t2t::Problem {
 public:
  std::string description() const override { return "test problem"; }
  void generate_data(const std::string&, const std::string&, const t2t::GenerateOptions&) override {}

 protected:
  t2t::FeatureEncoders load_encoders(const std::string&) const override { return {}; }
};
}  // namespace
T2T_REGISTER_PROBLEM(RegistryTestProblem);

TEST_CASE("problems register by macro and accept the _rev suffix", "[registry]") {
  REQUIRE(t2t::problem_registry().contains("registry_test_problem"));
  auto p = t2t::create_problem("registry_test_problem");
  CHECK(p->name() == "registry_test_problem");
  CHECK_FALSE(p->reversed());
  auto r = t2t::create_problem("registry_test_problem_rev");
  CHECK(r->name() == "registry_test_problem");
  CHECK(r->reversed());
  CHECK(p->data_filepaths("/d", "train").size() == 100);
  CHECK(p->data_filepaths("/d", "train")[7] == "/d/registry_test_problem-train-00007-of-00100");
  CHECK(p->data_filepaths("/d", "dev") ==
        std::vector<std::string>{"/d/registry_test_problem-dev-00000-of-00001"});
  REQUIRE_THROWS_WITH(p->data_filepaths("/d", "test"), Catch::Contains("has no split 'test'"));
  REQUIRE_THROWS_WITH(t2t::create_problem("registry_test_problm"),
                      Catch::Contains("Did you mean registry_test_problem"));
}

TEST_CASE("the shipped hparams sets are registered", "[registry]") {
  auto names = t2t::hparams_registry().names();
  for (auto n : {"transformer_tiny", "transformer_small", "transformer_base", "transformer_base_v1",
                 "transformer_base_v2", "transformer_base_v3", "transformer_base_single_gpu",
                 "transformer_big", "transformer_big_single_gpu"})
    CHECK(t2t::hparams_registry().contains(n));
}
