// Beam search and the decoder on models whose answers are known: a fake model
// whose next-token distribution is a fixed pseudo-random function of the
// input and the prefix (checked against exhaustive search and against a
// plain one-sentence re-statement of T2T's algorithm), an echo model (for the
// file, interactive and dev-split plumbing) and a small random Transformer
// (cached search against uncached forward()).
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "models/transformer.h"
#include "t2t/core/error.h"
#include "t2t/core/hash.h"
#include "t2t/core/hparams.h"
#include "t2t/search/beam_search.h"
#include "t2t/translate/decode_batches.h"
#include "t2t/search/top_candidates.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/prefix_model.h"
#include "tests/support/random_batch.h"

using t2t::Hypothesis;
using t2t::SearchOptions;

using t2t::test::padded_ids;
using t2t::test::PrefixModel;

namespace {

constexpr double kBig = 1e7;  // T2T's INF

// The best EOS-terminated sequence of at most `max_len` ids (EOS included)
// by log p / ((5 + len) / 6)^alpha, by trying them all.
Hypothesis exhaustive_best(const PrefixModel& m, const std::vector<int64_t>& input, int64_t vocab,
                           int64_t max_len, double alpha) {
  Hypothesis best;
  best.score = -1e300;
  std::function<void(std::vector<int64_t>&, double)> visit = [&](std::vector<int64_t>& prefix,
                                                                 double lp) {
    const auto next = m.log_probs(input, prefix);
    const int64_t len = static_cast<int64_t>(prefix.size()) + 1;
    const double score = (lp + next[t2t::kEosId]) / t2t::length_penalty(len, alpha);
    if (score > best.score) best = {prefix, score, true};
    if (len >= max_len) return;
    for (int64_t v = 0; v < vocab; ++v) {
      if (v == t2t::kEosId) continue;
      prefix.push_back(v);
      visit(prefix, lp + next[v]);
      prefix.pop_back();
    }
  };
  std::vector<int64_t> prefix;
  visit(prefix, 0.0);
  return best;
}

// T2T's beam search for one sentence, written out plainly with lists.
// `older_rule`: stop_early as T2T had it before its current beam_search.py,
// comparing the lowest finished score with the bound instead of the best
// (the same best output, often more steps). `steps`: decoder steps run.
// `patience` > 0: also stop as CTranslate2 does, once the best candidate of
// a step has ended and patience x K of the K best candidates of the steps
// so far have ended.
std::vector<Hypothesis> reference_beam(const PrefixModel& m, const std::vector<int64_t>& input,
                                       int64_t vocab, int64_t K, double alpha, int64_t decode_len,
                                       bool stop_early, int64_t num_return,
                                       bool older_rule = false, int64_t* steps = nullptr,
                                       double patience = 0) {
  struct H {
    std::vector<int64_t> seq;
    double lp, score;
    bool fin;
  };
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<H> alive(K, {{}, ninf, ninf, false});
  alive[0].lp = 0;
  std::vector<H> finished(K, {{}, 0, -kBig, false});
  int64_t ended = 0;
  bool best_ended = false;
  auto top = [](std::vector<H> v, size_t k, auto key) {
    std::stable_sort(v.begin(), v.end(), [&](const H& a, const H& b) { return key(a) > key(b); });
    v.resize(k);
    return v;
  };
  for (int64_t i = 0;; ++i) {
    std::vector<H> cands;
    for (const auto& a : alive) {
      const auto next = a.lp == ninf ? std::vector<double>(vocab, 0.0) : m.log_probs(input, a.seq);
      for (int64_t v = 0; v < vocab; ++v) {
        H h{a.seq, a.lp + next[v], 0, v == t2t::kEosId};
        h.seq.push_back(v);
        h.score = h.lp / t2t::length_penalty(i + 1, alpha);
        cands.push_back(h);
      }
    }
    cands = top(cands, 2 * K, [](const H& h) { return h.score; });
    for (int64_t j = 0; j < K; ++j) ended += cands[j].fin;
    best_ended = best_ended || cands[0].fin;
    alive = top(cands, K, [](const H& h) { return h.score - (h.fin ? kBig : 0.0); });
    for (auto& a : alive)
      if (a.fin) a.lp = ninf;  // an ended hypothesis is a dead alive slot
    std::vector<H> pool = finished;
    for (auto& f : pool) f.seq.push_back(0);
    for (auto c : cands) {
      if (!c.fin) c.score -= kBig;
      pool.push_back(c);
    }
    finished = top(pool, K, [](const H& h) { return h.score; });
    // The score that must beat the bound: the best finished one
    // (stop_early), or the lowest of the K, all of which must have finished.
    double settled = -kBig;
    bool all = true, any = false;
    for (const auto& f : finished) all = all && f.fin, any = any || f.fin;
    if (stop_early && older_rule) {
      settled = kBig;
      for (const auto& f : finished)
        if (f.fin) settled = std::min(settled, f.score);
      if (!any) settled = -kBig;
    } else if (stop_early) {
      if (finished[0].fin) settled = finished[0].score;
    } else if (all) {
      settled = finished[K - 1].score;
    }
    const bool met = settled > alive[0].lp / t2t::length_penalty(decode_len, alpha) ||
                     (patience > 0 && best_ended && ended >= std::llround(patience * K));
    if (steps) *steps = i + 1;
    if (i + 1 >= decode_len || met) break;
  }
  auto strip = [](std::vector<int64_t> s) {
    auto eos = std::find(s.begin(), s.end(), t2t::kEosId);
    s.erase(eos, s.end());
    return s;
  };
  std::vector<Hypothesis> out;
  for (const auto& f : finished)
    if (f.fin && f.score > -kBig && static_cast<int64_t>(out.size()) < num_return)
      out.push_back({strip(f.seq), f.score, true});
  for (const auto& a : alive)
    if (std::isfinite(a.lp) && static_cast<int64_t>(out.size()) < num_return)
      out.push_back({strip(a.seq), a.lp, false});
  return out;
}

std::vector<int64_t> greedy_reference(const PrefixModel& m, const std::vector<int64_t>& input,
                                      int64_t decode_len, double* score) {
  std::vector<int64_t> out;
  *score = 0;
  for (int64_t i = 0; i < decode_len; ++i) {
    const auto lp = m.log_probs(input, out);
    const int64_t best = std::max_element(lp.begin(), lp.end()) - lp.begin();
    *score += lp[best];
    if (best == t2t::kEosId) break;
    out.push_back(best);
  }
  return out;
}

}  // namespace

TEST_CASE("length penalty is ((5 + length) / 6)^alpha", "[decode]") {
  CHECK(t2t::length_penalty(1, 0.6) == Approx(1.0));
  CHECK(t2t::length_penalty(3, 0.6) == Approx(std::pow(8.0 / 6.0, 0.6)));
  CHECK(t2t::length_penalty(3, 0.6) == Approx(1.18836).epsilon(1e-4));
  CHECK(t2t::length_penalty(7, 1.0) == Approx(2.0));
  CHECK(t2t::length_penalty(50, 0.0) == Approx(1.0));
  CHECK(t2t::length_penalty(105, 0.6) == Approx(std::pow(110.0 / 6.0, 0.6)));
}

TEST_CASE("a beam that holds every prefix finds the exhaustive best", "[decode]") {
  // Vocabulary {pad, EOS, 2, 3}: with decode lengths up to 4 at most 27
  // alive prefixes and 108 candidates exist, so beam 64 misses nothing.
  const int64_t V = 4;
  const std::vector<std::vector<int64_t>> inputs = {{2, 3, t2t::kEosId}, {3, t2t::kEosId}};
  bool penalty_mattered = false;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    PrefixModel model(V, seed, 0.5);
    for (double alpha : {0.0, 0.6, 2.0}) {
      SearchOptions o;
      o.beam_size = 64;
      o.alpha = alpha;
      o.extra_length = 1;  // decode lengths 4 and 3
      const auto got = t2t::beam_search(model, padded_ids(inputs), o);
      REQUIRE(got.size() == 2);
      for (size_t s = 0; s < inputs.size(); ++s) {
        const int64_t len = static_cast<int64_t>(inputs[s].size()) + 1;
        const auto want = exhaustive_best(model, inputs[s], V, len, alpha);
        INFO("seed " << seed << " alpha " << alpha << " sentence " << s);
        REQUIRE(got[s].size() == 1);
        CHECK(got[s][0].finished);
        CHECK(got[s][0].ids == want.ids);
        CHECK(got[s][0].score == Approx(want.score).epsilon(1e-5));
      }
    }
    for (const auto& input : inputs) {
      const int64_t len = static_cast<int64_t>(input.size()) + 1;
      penalty_mattered |=
          exhaustive_best(model, input, V, len, 0.0).ids != exhaustive_best(model, input, V, len, 2.0).ids;
    }
  }
  // Otherwise the comparison above would not show that the penalty is applied.
  CHECK(penalty_mattered);
}

TEST_CASE("small beams equal a plain statement of T2T's algorithm", "[decode]") {
  const int64_t V = 7;
  const std::vector<std::vector<int64_t>> inputs = {
      {2, 5, 4, 3, t2t::kEosId}, {6, t2t::kEosId}, {3, 3, 2, t2t::kEosId}};
  for (uint64_t seed : {11u, 12u, 13u}) {
    for (int64_t K : {2, 3, 5}) {
      for (bool all_beams : {false, true}) {
        PrefixModel model(V, seed, -1.0);  // EOS unlikely: long searches
        SearchOptions o;
        o.beam_size = K;
        o.alpha = 0.6;
        o.extra_length = 6;
        o.num_return = all_beams ? K : 1;
        o.stop_early = !all_beams;
        const auto got = t2t::beam_search(model, padded_ids(inputs), o);
        for (size_t s = 0; s < inputs.size(); ++s) {
          const int64_t len = static_cast<int64_t>(inputs[s].size()) + o.extra_length;
          const auto want =
              reference_beam(model, inputs[s], V, K, o.alpha, len, o.stop_early, o.num_return);
          INFO("seed " << seed << " beam " << K << " all beams " << all_beams << " sentence " << s);
          REQUIRE(got[s].size() == want.size());
          for (size_t k = 0; k < want.size(); ++k) {
            CHECK(got[s][k].ids == want[k].ids);
            CHECK(got[s][k].finished == want[k].finished);
            CHECK(got[s][k].score == Approx(want[k].score).epsilon(1e-5));
          }
        }
      }
    }
  }
}

TEST_CASE("a sentence stops once its best finished hypothesis beats the bound, as T2T now does",
          "[decode]") {
  // The rule before T2T's current beam_search.py waited for the lowest
  // finished score to beat the bound: the same best hypothesis, more steps.
  // Look for sentences where the two rules differ, and check that the search
  // takes the current rule's step count and returns its hypotheses.
  const int64_t V = 7, K = 4;
  const double alpha = 0.6;
  int differing = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<int64_t> input = {2, 3, 4, static_cast<int64_t>(2 + seed % 5), t2t::kEosId};
    PrefixModel model(V, seed, 0.5);
    SearchOptions o;
    o.beam_size = K;
    o.alpha = alpha;
    o.extra_length = 8;
    const int64_t len = static_cast<int64_t>(input.size()) + o.extra_length;
    int64_t want_steps = 0, older_steps = 0;
    const auto want = reference_beam(model, input, V, K, alpha, len, true, 1, false, &want_steps);
    const auto older = reference_beam(model, input, V, K, alpha, len, true, 1, true, &older_steps);
    REQUIRE(want.size() == 1);
    CHECK(older[0].ids == want[0].ids);  // the rules agree on the best hypothesis
    t2t::SearchStats stats;
    const auto got = t2t::beam_search(model, padded_ids({input}), o, &stats);
    INFO("seed " << seed);
    CHECK(stats.steps == want_steps);
    CHECK(got[0][0].ids == want[0].ids);
    CHECK(got[0][0].score == Approx(want[0].score).epsilon(1e-5));
    if (older_steps > want_steps) ++differing;
  }
  // The check above has teeth only where the rules differ.
  CHECK(differing >= 3);
}

TEST_CASE("with patience a sentence also stops as CTranslate2's search does", "[decode]") {
  // CTranslate2 stops a sentence once its best candidate of a step has ended
  // and patience x beam of its beam's candidates have: for most sentences
  // long before T2T's test would. Check the steps and the result against
  // the plain statement, that the rule cut some searches short, and that
  // it never runs longer than T2T's test.
  const int64_t V = 7;
  int shorter = 0, same_best = 0, cases = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const std::vector<int64_t> input = {2, 3, static_cast<int64_t>(2 + seed % 5), t2t::kEosId};
    PrefixModel model(V, seed, 0.5);
    for (int64_t K : {2, 4}) {
      for (double patience : {1.0, 2.0}) {
        SearchOptions o;
        o.beam_size = K;
        o.extra_length = 40;  // with alpha 1, a loose bound for T2T's test
        o.alpha = 1.0;
        o.patience = patience;
        const int64_t len = static_cast<int64_t>(input.size()) + o.extra_length;
        int64_t want_steps = 0, t2t_steps = 0;
        const auto want = reference_beam(model, input, V, K, o.alpha, len, true, 1, false,
                                         &want_steps, patience);
        const auto t2t_rule = reference_beam(model, input, V, K, o.alpha, len, true, 1, false,
                                             &t2t_steps);
        t2t::SearchStats stats;
        const auto got = t2t::beam_search(model, padded_ids({input}), o, &stats);
        INFO("seed " << seed << " beam " << K << " patience " << patience);
        CHECK(stats.steps == want_steps);
        CHECK(want_steps <= t2t_steps);
        REQUIRE(got[0].size() == want.size());
        CHECK(got[0][0].ids == want[0].ids);
        CHECK(got[0][0].score == Approx(want[0].score).epsilon(1e-5));
        shorter += want_steps < t2t_steps;
        same_best += got[0][0].ids == t2t_rule[0].ids;
        ++cases;
      }
    }
  }
  INFO(shorter << " of " << cases << " searches cut short, " << same_best << " with T2T's best");
  CHECK(shorter >= cases / 2);  // the rule takes effect
  CHECK(same_best >= cases / 2);  // and mostly finds what the longer search finds

  PrefixModel model(V, 1, 0.5);
  for (double bad : {-1.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    SearchOptions o;
    o.patience = bad;
    CHECK_THROWS_WITH(t2t::beam_search(model, padded_ids({{2, t2t::kEosId}}), o),
                      Catch::Contains("patience"));
  }
}

TEST_CASE("with every beam returned a sentence stops once no alive hypothesis can enter them",
          "[decode]") {
  const int64_t V = 7, K = 3;
  int early = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<int64_t> input = {5, 4, 3, 2, t2t::kEosId};
    PrefixModel model(V, seed, 1.0);  // EOS likely: beams fill up early
    SearchOptions o;
    o.beam_size = K;
    o.extra_length = 10;
    o.num_return = K;
    o.stop_early = false;
    const int64_t len = static_cast<int64_t>(input.size()) + o.extra_length;
    int64_t want_steps = 0;
    const auto want = reference_beam(model, input, V, K, o.alpha, len, false, K, false, &want_steps);
    t2t::SearchStats stats;
    const auto got = t2t::beam_search(model, padded_ids({input}), o, &stats);
    INFO("seed " << seed);
    CHECK(stats.steps == want_steps);
    REQUIRE(got[0].size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) CHECK(got[0][k].ids == want[k].ids);
    if (want_steps < len) ++early;
  }
  CHECK(early >= 3);  // not every sentence runs to its decode length
}

TEST_CASE("a sentence whose decode length runs out unfinished returns its alive beam", "[decode]") {
  // EOS never among the 2 × beam best candidates: no hypothesis finishes.
  PrefixModel model(12, 3, -30.0);
  SearchOptions o;
  o.beam_size = 2;
  o.extra_length = 2;
  const auto got = t2t::beam_search(model, padded_ids({{2, t2t::kEosId}}), o);
  REQUIRE(got[0].size() == 1);
  CHECK_FALSE(got[0][0].finished);
  CHECK(got[0][0].ids.size() == 4);  // input length 2 + extra 2
  const auto want = reference_beam(model, {2, t2t::kEosId}, 12, 2, 0.6, 4, true, 1);
  CHECK(got[0][0].ids == want[0].ids);
  CHECK(got[0][0].score == Approx(want[0].score).epsilon(1e-5));  // the raw log-probability
}

TEST_CASE("beam size 1 decodes greedily", "[decode]") {
  const std::vector<std::vector<int64_t>> inputs = {{2, 3, 4, t2t::kEosId}, {5, t2t::kEosId}};
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    PrefixModel model(6, seed, 0.3);
    SearchOptions o;
    o.beam_size = 1;
    o.extra_length = 5;
    const auto got = t2t::beam_search(model, padded_ids(inputs), o);
    for (size_t s = 0; s < inputs.size(); ++s) {
      double score = 0;
      const auto want = greedy_reference(model, inputs[s], inputs[s].size() + 5, &score);
      INFO("seed " << seed << " sentence " << s);
      CHECK(got[s][0].ids == want);
      CHECK(got[s][0].score == Approx(score).epsilon(1e-5));
    }
  }
}

TEST_CASE("finished sentences leave the batch without changing any result", "[decode]") {
  std::vector<std::vector<int64_t>> inputs;
  for (int64_t n = 1; n <= 6; ++n) {
    std::vector<int64_t> row(n, 2 + n % 4);
    row.push_back(t2t::kEosId);
    inputs.push_back(row);
  }
  for (int64_t K : {1, 4}) {
    PrefixModel kept(6, 21, 0.8), dropped(6, 21, 0.8);
    SearchOptions o;
    o.beam_size = K;
    o.extra_length = 8;
    o.drop_finished = false;
    t2t::SearchStats kept_stats, dropped_stats;
    const auto a = t2t::beam_search(kept, padded_ids(inputs), o, &kept_stats);
    o.drop_finished = true;
    const auto b = t2t::beam_search(dropped, padded_ids(inputs), o, &dropped_stats);
    INFO("beam " << K);
    for (size_t s = 0; s < inputs.size(); ++s) {
      CHECK(a[s][0].ids == b[s][0].ids);
      CHECK(a[s][0].score == b[s][0].score);
    }
    // The first step runs one row per sentence (its beams would all read
    // the same empty history), then each sentence has K rows; the batch
    // shrinks as sentences settle, and the work with it.
    const auto sentences = static_cast<int64_t>(inputs.size());
    const auto& rows = dropped.rows_per_step;
    REQUIRE(rows.size() > 2);
    CHECK(rows.front() == sentences);
    CHECK(rows[1] % K == 0);
    CHECK(rows[1] <= sentences * K);
    CHECK(rows.back() < rows[1]);
    CHECK(std::is_sorted(rows.rbegin(), rows.rend() - 1));
    CHECK(dropped_stats.row_steps < kept_stats.row_steps);
    CHECK(kept.rows_per_step.front() == sentences);
    CHECK(kept.rows_per_step[1] == sentences * K);
    CHECK(kept.rows_per_step.back() == sentences * K);
  }
}

TEST_CASE("search on the Transformer's cache equals uncached forward()", "[decode]") {
  t2t::HParams hp = t2t::hparams_registry().get("transformer_tiny")();
  hp.set("hidden_size", 32);
  hp.set("filter_size", 64);
  hp.set("num_heads", 2);
  torch::manual_seed(7);
  auto model = std::make_shared<t2t::Transformer>(hp, t2t::FeatureInfo{20, 20, false});
  model->eval();
  const auto inputs = padded_ids({{4, 5, 6, 7, t2t::kEosId}, {8, 9, t2t::kEosId}, {3, t2t::kEosId}});
  SearchOptions o;
  o.beam_size = 1;
  o.extra_length = 6;
  const auto got = t2t::beam_search(*model, inputs, o);
  torch::NoGradGuard no_grad;
  for (int64_t s = 0; s < inputs.size(0); ++s) {
    const auto row = inputs[s].index({inputs[s].ne(0)}).unsqueeze(0);
    std::vector<int64_t> prefix;
    const int64_t len = row.size(1) + o.extra_length;
    for (int64_t i = 0; i < len; ++i) {
      // forward() sees targets shifted right; the last position predicts
      // the next id.
      std::vector<int64_t> targets = prefix;
      targets.push_back(0);
      const auto logits = model->forward(row, padded_ids({targets}));
      const int64_t next = logits[0][i].argmax().item<int64_t>();
      if (next == t2t::kEosId) break;
      prefix.push_back(next);
    }
    INFO("sentence " << s);
    CHECK(got[s][0].ids == prefix);
  }
  // Beam 4 with and without dropping settled sentences: the same results.
  o.beam_size = 4;
  const auto dropped = t2t::beam_search(*model, inputs, o);
  o.drop_finished = false;
  const auto kept = t2t::beam_search(*model, inputs, o);
  for (int64_t s = 0; s < inputs.size(0); ++s) {
    CHECK(dropped[s][0].ids == kept[s][0].ids);
    CHECK(dropped[s][0].score == Approx(kept[s][0].score).epsilon(1e-5));
  }
}

TEST_CASE("the fused CPU candidate selection equals log_softmax + topk", "[decode]") {
  torch::manual_seed(21);
  for (int64_t vocab : {3, 17, 50, 1000, 8195}) {
    const int64_t rows = 5, beams = 4, count = 8;
    const auto logits = torch::randn({rows * beams, vocab}) * 4;
    auto alive = torch::randn({rows, beams}) * 3 - 5;
    alive[0].narrow(0, 1, 3).fill_(-std::numeric_limits<float>::infinity());  // first step
    alive[3][2] = -std::numeric_limits<float>::infinity();
    const auto got = t2t::top_candidates(logits, alive, count, 1.7);
    const auto want = t2t::top_candidates_aten(logits, alive, count, 1.7);
    INFO("vocab " << vocab);
    CHECK(torch::allclose(got.log_probs, want.log_probs, 1e-5, 1e-5));
    CHECK(torch::allclose(got.scores, want.scores, 1e-5, 1e-5));
    // Where the values are finite and distinct, the same candidates in the
    // same order.
    const auto finite = want.log_probs.isfinite();
    CHECK(torch::equal(got.beams.masked_select(finite), want.beams.masked_select(finite)));
    CHECK(torch::equal(got.ids.masked_select(finite), want.ids.masked_select(finite)));
    CHECK(torch::equal(got.log_probs.isfinite(), finite));
  }
}

TEST_CASE("the fused CPU candidate selection keeps ties in beam and id order", "[decode]") {
  // Every logit equal: blocks of the vocabulary are skipped once the list is
  // full, and the earliest candidates must be the ones kept.
  const int64_t rows = 2, beams = 3, vocab = 200, count = 6;  // several 64-id blocks
  const auto logits = torch::zeros({rows * beams, vocab});
  const auto alive = torch::zeros({rows, beams});
  const auto got = t2t::top_candidates(logits, alive, count, 1.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < count; ++j) {
      CHECK(got.beams[r][j].item<int64_t>() == 0);
      CHECK(got.ids[r][j].item<int64_t>() == j);
    }
  }
}

TEST_CASE("decode_batches: longest first, stable, empty sources left out", "[decode]") {
  const std::vector<std::vector<int64_t>> sources = {
      {5, 1}, {}, {7, 8, 9, 1}, {1}, {3, 4, 1}, {6, 1}, {2, 2, 2, 1}};
  const auto batches = t2t::decode_batches(sources, 2);
  const std::vector<std::vector<int64_t>> expected = {{2, 6}, {4, 0}, {5}};
  CHECK(batches == expected);
  CHECK(t2t::is_empty_source({}));
  CHECK(t2t::is_empty_source({t2t::kEosId}));
  CHECK_FALSE(t2t::is_empty_source({5, t2t::kEosId}));
  CHECK(t2t::decode_batches(sources, 100).size() == 1);
  CHECK_THROWS_WITH(t2t::decode_batches(sources, 0), Catch::Contains("at least 1"));

  const auto padded = t2t::padded_batch(sources, batches[1]);
  REQUIRE(padded.sizes() == torch::IntArrayRef({2, 3}));
  CHECK(padded.dtype() == torch::kLong);
  CHECK(torch::equal(padded, torch::tensor({3, 4, 1, 5, 1, 0}, torch::kLong).view({2, 3})));
}
