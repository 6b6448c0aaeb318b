// Lexical shortlists: the batch columns a shortlist gives, its two file
// formats, learning one from pairs, and a search over the columns, which
// must be the search over the whole vocabulary of a model whose other
// logits are -inf (PrefixModel, whose answers are known).
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "t2t/core/error.h"
#include "t2t/core/file_util.h"
#include "t2t/search/beam_search.h"
#include "t2t/search/lexical_shortlist.h"
#include "t2t/search/output_columns.h"
#include "t2t/search/shortlist_builder.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/prefix_model.h"
#include "tests/support/random_batch.h"
#include "tests/support/test_util.h"

using t2t::LexicalShortlist;
using t2t::OutputColumns;
using t2t::ShortlistTokens;
using Ids = std::vector<int64_t>;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

LexicalShortlist::Target t(int64_t id, float score = kNaN) { return {id, score}; }

Ids ids_of(const std::vector<LexicalShortlist::Target>& targets) {
  Ids out;
  for (const auto& x : targets) out.push_back(x.id);
  return out;
}

// A shortlist over a 20-id source and 30-id target vocabulary.
LexicalShortlist small_shortlist() {
  LexicalShortlist s(20, 30);
  s.set_frequent({t(5), t(6), t(7)});
  s.add({3}, {t(10), t(11), t(12)});
  s.add({4}, {t(13)});
  s.add({3, 4}, {t(20), t(21)});
  return s;
}

// Names t0 ... tN-1, and one that a file cannot hold.
std::vector<std::string> names(int64_t n, const std::string& prefix) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// The model's logits, -inf outside `allowed`: what a search over the
// columns `allowed` must equal when searching the whole vocabulary.
class MaskedModel : public t2t::T2TModel {
 public:
  MaskedModel(t2t::T2TModel& inner, const Ids& allowed, int64_t vocab) : inner_(inner) {
    mask_ = torch::full({vocab}, -std::numeric_limits<float>::infinity());
    for (int64_t id : allowed) mask_[id] = 0.0f;
  }
  torch::Tensor forward(const torch::Tensor& a, const torch::Tensor& b) override {
    return inner_.forward(a, b);
  }
  std::unique_ptr<t2t::DecoderState> start_decoding(const torch::Tensor& inputs) override {
    return inner_.start_decoding(inputs);
  }
  torch::Tensor decode_step(t2t::DecoderState& state, const torch::Tensor& last) override {
    return inner_.decode_step(state, last) + mask_;
  }
  void reorder_state(t2t::DecoderState& state, const torch::Tensor& index) override {
    inner_.reorder_state(state, index);
  }

 private:
  t2t::T2TModel& inner_;
  torch::Tensor mask_;
};

void check_same(const std::vector<std::vector<t2t::Hypothesis>>& got,
                const std::vector<std::vector<t2t::Hypothesis>>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    REQUIRE(got[s].size() == want[s].size());
    for (size_t k = 0; k < got[s].size(); ++k) {
      INFO("sentence " << s << " hypothesis " << k);
      CHECK(got[s][k].ids == want[s][k].ids);
      CHECK(got[s][k].finished == want[s][k].finished);
      CHECK(got[s][k].score == Approx(want[s][k].score).margin(1e-4));
    }
  }
}

}  // namespace

TEST_CASE("output columns map ids and columns and refuse what is not a column set",
          "[shortlist]") {
  const OutputColumns whole;
  CHECK(whole.whole());
  CHECK(whole.id(17) == 17);
  CHECK(whole.column(17) == 17);
  const OutputColumns c({0, 1, 7, 9}, 10);
  CHECK_FALSE(c.whole());
  CHECK(c.size() == 4);
  CHECK(c.id(2) == 7);
  CHECK(c.column(9) == 3);
  CHECK(c.column(8) == -1);
  CHECK_THROWS_WITH(OutputColumns({1, 1, 3}, 10), Catch::Contains("distinct and ascending"));
  CHECK_THROWS_WITH(OutputColumns({1, 3, 10}, 10), Catch::Contains("outside the target vocabulary"));
  CHECK_THROWS_WITH(OutputColumns({1}, 10), Catch::Contains("at least two"));
}

TEST_CASE("a batch's columns are its n-grams' targets, the frequent ones, PAD, EOS and extras",
          "[shortlist]") {
  const LexicalShortlist s = small_shortlist();
  const Ids a = {3, 4, t2t::kEosId, 0}, b = {4, t2t::kEosId};
  CHECK(s.columns({&a}, {}, {}).ids() == Ids{0, 1, 5, 6, 7, 10, 11, 12, 13, 20, 21});
  CHECK(s.columns({&b}, {25}, {}).ids() == Ids{0, 1, 5, 6, 7, 13, 25});
  // After EOS nothing counts: "3 4" is no bigram of {4, EOS, 3}.
  const Ids c = {4, t2t::kEosId, 3};
  CHECK(s.columns({&c}, {}, {}).ids() == Ids{0, 1, 5, 6, 7, 13});
  t2t::ShortlistLimits limits;
  limits.best = 1;
  limits.frequent = 2;
  CHECK(s.columns({&a}, {}, limits).ids() == Ids{0, 1, 5, 6, 10, 13, 20});
  CHECK(s.columns({&a, &b}, {}, limits).ids() == Ids{0, 1, 5, 6, 10, 13, 20});
  CHECK_THROWS_WITH(s.columns({&a}, {30}, {}), Catch::Contains("outside its vocabulary"));
  // Every id: no restriction at all.
  LexicalShortlist all(20, 4);
  all.set_frequent({t(2), t(3)});
  CHECK(all.columns({&b}, {}, {}).whole());
  CHECK_THROWS_WITH(LexicalShortlist(20, 30).add({3}, {t(30)}), Catch::Contains("outside"));
  CHECK_THROWS_WITH(LexicalShortlist(20, 30).add({20}, {t(3)}), Catch::Contains("source id 20"));
}

TEST_CASE("a vmap round trips by vocabulary strings and by <id_N>", "[shortlist]") {
  const t2t::test::TempDir dir("shortlist_vmap");
  const LexicalShortlist s = small_shortlist();
  const ShortlistTokens src(names(20, "s")), tgt(names(30, "t"));
  for (const bool by_id : {false, true}) {
    INFO("by id: " << by_id);
    const ShortlistTokens& source = by_id ? ShortlistTokens::ids(20) : src;
    const ShortlistTokens& target = by_id ? ShortlistTokens::ids(30) : tgt;
    const std::string path = dir / (by_id ? "ids.vmap" : "names.vmap");
    t2t::write_shortlist(s, path, t2t::ShortlistFormat::kVmap, source, target);
    const std::string text = t2t::read_file(path);
    CHECK_THAT(text, Catch::StartsWith(by_id ? "\t<id_5> <id_6> <id_7>\n" : "\tt5 t6 t7\n"));
    CHECK_THAT(text, Catch::Contains(by_id ? "<id_3> <id_4>\t<id_20> <id_21>\n"
                                           : "s3 s4\tt20 t21\n"));
    const LexicalShortlist back = t2t::read_shortlist(path, source, target, {});
    CHECK(ids_of(back.frequent()) == Ids{5, 6, 7});
    CHECK(back.size() == 3);
    const Ids bigram = {3, 4};
    REQUIRE(back.targets(bigram.data(), 2) != nullptr);
    CHECK(ids_of(*back.targets(bigram.data(), 2)) == Ids{20, 21});
    CHECK(ids_of(*back.targets(bigram.data(), 1)) == Ids{10, 11, 12});
  }
}

TEST_CASE("a vmap's faults name the file and line, and unknown tokens are counted and skipped",
          "[shortlist]") {
  const t2t::test::TempDir dir("shortlist_bad");
  const ShortlistTokens src(names(20, "s")), tgt(names(30, "t"));
  auto read = [&](const std::string& text, t2t::ShortlistReadReport* report = nullptr) {
    const std::string path = dir / "x.vmap";
    t2t::write_file_atomic(path, text);
    return t2t::read_shortlist(path, src, tgt, {}, report);
  };
  CHECK_THROWS_WITH(read("\tt5\ns3 t10\n"),
                    Catch::Contains("x.vmap line 2") && Catch::Contains("no tab"));
  CHECK_THROWS_WITH(read("s3\tt10\tt11\n"), Catch::Contains("line 1: more than one tab"));
  CHECK_THROWS_WITH(read("\tt5\n\tt6\n"), Catch::Contains("line 2: a second line"));
  t2t::ShortlistReadReport report;
  const auto s = read("\tt5 zz\ns3\tt10 t99 t11\nqq s4\tt12\n\n", &report);
  CHECK(report.unknown_source == 1);
  CHECK(report.unknown_target == 2);
  CHECK(ids_of(s.frequent()) == Ids{5});
  const Ids three = {3};
  CHECK(ids_of(*s.targets(three.data(), 1)) == Ids{10, 11});
  // Names a file cannot hold are refused when writing.
  auto spaced = names(30, "t");
  spaced[11] = "a b";
  CHECK_THROWS_WITH(t2t::write_shortlist(small_shortlist(), dir / "y.vmap",
                                         t2t::ShortlistFormat::kVmap, src,
                                         ShortlistTokens(spaced)),
                    Catch::Contains("token 11 ('a b')") && Catch::Contains("<id_N>"));
}

TEST_CASE("Marian's text shortlist is read with first, threshold and best-first order, and written",
          "[shortlist]") {
  const t2t::test::TempDir dir("shortlist_marian");
  const ShortlistTokens src(names(20, "s")), tgt(names(30, "t"));
  const std::string path = dir / "lex.s2t";
  t2t::write_file_atomic(path, "t10 s3 0.2\nt11 s3 0.7\nt12 s3 0.05\nt13 NULL 0.9\nNULL s4 0.5\n"
                               "t14 s4 0.4\nt15 s99 0.3\n");
  t2t::ShortlistReadOptions options;
  options.format = t2t::ShortlistFormat::kMarian;
  options.marian_first = 4;
  options.marian_threshold = 0.1;
  t2t::ShortlistReadReport report;
  const auto s = t2t::read_shortlist(path, src, tgt, options, &report);
  CHECK(ids_of(s.frequent()) == Ids{0, 1, 2, 3});
  const Ids three = {3}, four = {4};
  CHECK(ids_of(*s.targets(three.data(), 1)) == Ids{11, 10});
  CHECK(s.targets(three.data(), 1)->front().score == Approx(0.7));
  CHECK(ids_of(*s.targets(four.data(), 1)) == Ids{14});
  CHECK(report.unknown_source == 1);
  // Written back: the scores it has; a vmap's targets (no score) by rank.
  t2t::write_shortlist(s, dir / "out.s2t", t2t::ShortlistFormat::kMarian, src, tgt);
  CHECK(t2t::read_file(dir / "out.s2t") == "t11 s3 0.7\nt10 s3 0.2\nt14 s4 0.4\n");
  t2t::write_shortlist(small_shortlist(), dir / "ranks.s2t", t2t::ShortlistFormat::kVmap, src,
                       tgt);
  LexicalShortlist unigrams(20, 30);
  unigrams.add({3}, {t(10), t(11)});
  t2t::write_shortlist(unigrams, dir / "ranks.s2t", t2t::ShortlistFormat::kMarian, src, tgt);
  CHECK(t2t::read_file(dir / "ranks.s2t") == "t10 s3 1\nt11 s3 0.5\n");
  CHECK_THROWS_WITH(t2t::write_shortlist(small_shortlist(), dir / "no.s2t",
                                         t2t::ShortlistFormat::kMarian, src, tgt),
                    Catch::Contains("single source tokens only"));
  t2t::write_file_atomic(path, "t10 s3\n");
  CHECK_THROWS_WITH(t2t::read_shortlist(path, src, tgt, options),
                    Catch::Contains("lex.s2t line 1: 2 fields"));
  t2t::write_file_atomic(path, "t10 s3 1.5\n");
  CHECK_THROWS_WITH(t2t::read_shortlist(path, src, tgt, options),
                    Catch::Contains("line 1: '1.5' is not a probability"));
}

TEST_CASE("a shortlist learnt from pairs ranks targets by p(target | source)", "[shortlist]") {
  t2t::ShortlistCounts counts(10, 12);
  // Source 3 comes with target 8 every time, with 9 once; target 5 is in
  // every pair (the most frequent: always allowed, listed nowhere else).
  for (int i = 0; i < 4; ++i) counts.add({3, 4, t2t::kEosId}, {5, 8, t2t::kEosId});
  counts.add({3, t2t::kEosId}, {5, 9, 9, t2t::kEosId});
  counts.add({3, t2t::kEosId}, {5, 9, t2t::kEosId});
  counts.add({6, t2t::kEosId}, {5, 10, t2t::kEosId});
  t2t::ShortlistBuildOptions options;
  options.frequent = 1;
  options.min_count = 1;
  options.best = 5;
  auto s = counts.build(options);
  CHECK(ids_of(s.frequent()) == Ids{5});
  const Ids three = {3}, four = {4}, six = {6};
  REQUIRE(s.targets(three.data(), 1));
  CHECK(ids_of(*s.targets(three.data(), 1)) == Ids{8, 9});
  CHECK(s.targets(three.data(), 1)->front().score == Approx(4.0 / 6));
  CHECK(ids_of(*s.targets(four.data(), 1)) == Ids{8});
  CHECK(ids_of(*s.targets(six.data(), 1)) == Ids{10});
  options.min_count = 2;
  s = counts.build(options);
  CHECK(ids_of(*s.targets(three.data(), 1)) == Ids{8, 9});
  CHECK(s.targets(six.data(), 1) == nullptr);
  options.best = 1;
  CHECK(ids_of(*counts.build(options).targets(three.data(), 1)) == Ids{8});
  // Word links: only the linked tokens count; links to EOS or outside go.
  t2t::ShortlistCounts aligned(10, 12);
  aligned.add_aligned({3, 4, t2t::kEosId}, {8, 9, t2t::kEosId}, {{0, 1}, {1, 0}, {2, 2}, {7, 0}});
  options.frequent = 0;
  options.min_count = 1;
  options.best = 5;
  s = aligned.build(options);
  CHECK(ids_of(*s.targets(three.data(), 1)) == Ids{9});
  CHECK(ids_of(*s.targets(four.data(), 1)) == Ids{8});
}

TEST_CASE("a search over a shortlist's columns is the search of a model without the other ids",
          "[shortlist]") {
  const int64_t vocab = 40;
  t2t::test::PrefixModel model(vocab, 11, 1.0);
  model.eval();
  const auto inputs = t2t::test::padded_ids({{5, 6, 7, t2t::kEosId}, {8, t2t::kEosId}});
  const Ids allowed = {0, 1, 3, 4, 9, 12, 13, 17, 20, 22, 25, 26, 30, 31, 35, 39};
  const OutputColumns columns(allowed, vocab);
  MaskedModel masked(model, allowed, vocab);
  t2t::SearchOptions options;
  options.extra_length = 6;
  for (const int64_t beam : {1, 4}) {
    options.beam_size = beam;
    options.num_return = beam == 1 ? 1 : 2;
    DYNAMIC_SECTION("beam " << beam) {
      const auto want = t2t::beam_search(masked, inputs, options);
      const auto got = t2t::beam_search(model, inputs, options, nullptr, {}, {}, columns);
      check_same(got, want);
      for (const auto& sentence : got)
        for (const auto& h : sentence)
          for (int64_t id : h.ids) CHECK(columns.column(id) >= 0);
    }
  }
  SECTION("with a prefix, constraints and a repetition guard") {
    options.beam_size = 4;
    options.no_repeat_ngram_size = 2;
    t2t::TargetGuide first, second;
    first.prefix = {12, 4};
    second.constraints = {{22, 30}};
    const auto want = t2t::beam_search(masked, inputs, options, nullptr, {}, {first, second});
    const auto got =
        t2t::beam_search(model, inputs, options, nullptr, {}, {first, second}, columns);
    check_same(got, want);
    // An id a guide asks for outside the columns is a clear error.
    t2t::TargetGuide outside;
    outside.prefix = {2};
    CHECK_THROWS_WITH(
        t2t::beam_search(model, inputs, options, nullptr, {}, {outside, second}, columns),
        Catch::Contains("target id 2") && Catch::Contains("not among the shortlist's columns"));
  }
  SECTION("sampling draws among the columns") {
    options.beam_size = 1;
    options.num_return = 1;
    options.sampling.random = true;
    options.sampling.temperature = 1.0;
    options.sampling.seed = 5;
    const auto got = t2t::beam_search(model, inputs, options, nullptr, {}, {}, columns);
    for (const auto& sentence : got)
      for (int64_t id : sentence[0].ids) CHECK(columns.column(id) >= 0);
  }
}
