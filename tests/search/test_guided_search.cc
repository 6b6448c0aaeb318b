// What a caller asks of a search beyond its options: a target prefix,
// constraint phrases (dynamic beam allocation), repetition guards and the
// attention alignments are read from. Each is checked against a plain
// one-sentence statement of the algorithm on PrefixModel, whose answers are
// known, and for the promise it makes (the prefix first, every phrase in).
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "t2t/core/error.h"
#include "t2t/model/ensemble_model.h"
#include "t2t/search/beam_search.h"
#include "t2t/search/constrained_beams.h"
#include "t2t/search/constraint_state.h"
#include "t2t/search/logit_edits.h"
#include "t2t/search/target_guide.h"
#include "t2t/text/text_encoder.h"
#include "tests/support/prefix_model.h"
#include "tests/support/random_batch.h"

using t2t::ConstraintState;
using t2t::Hypothesis;
using t2t::Phrases;
using t2t::SearchOptions;
using t2t::TargetGuide;
using t2t::test::padded_ids;
using t2t::test::PrefixModel;
using Ids = std::vector<int64_t>;

namespace {

constexpr double kBig = 1e7;  // T2T's INF
const double kNegInf = -std::numeric_limits<double>::infinity();

bool contains(const Ids& seq, const Ids& phrase) {
  return std::search(seq.begin(), seq.end(), phrase.begin(), phrase.end()) != seq.end();
}

// log_softmax in double of PrefixModel's logits after `seq`, with the
// search's edits: the prefix's id alone while the prefix lasts, else no
// repeated n-gram, the repetition penalty, and no EOS before every phrase
// is met.
std::vector<double> edited_log_probs(const PrefixModel& m, const Ids& input, const Ids& seq,
                                     const TargetGuide& guide, const ConstraintState* cs,
                                     const SearchOptions& o) {
  uint64_t h = t2t::test::mix(m.input_hash(input), 0);
  for (int64_t id : seq) h = t2t::test::mix(h, id);
  const auto raw = m.logits(h);
  std::vector<double> x(raw.begin(), raw.end());
  const auto step = static_cast<int64_t>(seq.size());
  if (step < static_cast<int64_t>(guide.prefix.size())) {
    for (size_t v = 0; v < x.size(); ++v)
      if (static_cast<int64_t>(v) != guide.prefix[step]) x[v] = kNegInf;
  } else {
    std::set<int64_t> seen(seq.begin(), seq.end());
    if (o.repetition_penalty != 1.0)
      for (int64_t id : seen) {
        const float f = static_cast<float>(x[id]);
        x[id] = f > 0 ? f / o.repetition_penalty : f * o.repetition_penalty;
      }
    const int64_t n = o.no_repeat_ngram_size;
    if (n > 0 && step >= n - 1)
      for (int64_t s = 0; s + n - 1 < step; ++s)
        if (std::equal(seq.begin() + s, seq.begin() + s + n - 1, seq.end() - (n - 1)))
          x[seq[s + n - 1]] = kNegInf;
    if (cs && !cs->all_met()) x[t2t::kEosId] = kNegInf;
  }
  double mx = kNegInf, sum = 0;
  for (double v : x) mx = std::max(mx, v);
  for (double v : x) sum += std::exp(v - mx);
  for (double& v : x) v = v - mx - std::log(sum);
  return x;
}

// Greedy decoding with the guide's prefix and the repetition guards,
// written plainly.
Ids greedy_reference(const PrefixModel& m, const Ids& input, const TargetGuide& guide,
                     const SearchOptions& o, int64_t decode_len) {
  Ids out;
  for (int64_t i = 0; i < decode_len; ++i) {
    const auto lp = edited_log_probs(m, input, out, guide, nullptr, o);
    const int64_t best = std::max_element(lp.begin(), lp.end()) - lp.begin();
    if (best == t2t::kEosId) break;
    out.push_back(best);
  }
  return out;
}

// Beam search with a guide, for one sentence, written out plainly: T2T's
// search, where a guide with phrases chooses the alive hypotheses by
// dynamic beam allocation over the step's 2K best candidates, each alive
// hypothesis's likeliest id and the ids that make progress through its
// phrases (Post & Vilar 2018; Hu et al. 2019).
std::vector<Hypothesis> reference_guided_beam(const PrefixModel& m, const Ids& input, int64_t V,
                                              const TargetGuide& guide, const SearchOptions& o,
                                              int64_t decode_len) {
  const int64_t K = o.beam_size;
  const Phrases& phrases = guide.constraints;
  struct H {
    Ids seq;
    double lp, score;
    bool fin;
    ConstraintState cs;
  };
  const ConstraintState start = ConstraintState::start(phrases);
  std::vector<H> alive(K, {{}, kNegInf, kNegInf, false, start});
  alive[0].lp = 0;
  std::vector<H> finished(K, {{}, 0, -kBig, false, start});
  const bool constrained = !phrases.empty();
  for (int64_t i = 0;; ++i) {
    const double penalty = t2t::length_penalty(i + 1, o.alpha);
    struct C {
      int64_t beam, id;
      double lp;
    };
    std::vector<C> all, extra;
    for (int64_t k = 0; k < (i == 0 ? 1 : K); ++k) {
      if (!std::isfinite(alive[k].lp)) continue;
      const auto next = edited_log_probs(m, input, alive[k].seq, guide,
                                         constrained ? &alive[k].cs : nullptr, o);
      for (int64_t v = 0; v < V; ++v) all.push_back({k, v, alive[k].lp + next[v]});
      if (constrained && i >= static_cast<int64_t>(guide.prefix.size())) {
        extra.push_back({k, std::max_element(next.begin(), next.end()) - next.begin(), 0});
        for (int64_t id : alive[k].cs.next_ids(phrases)) extra.push_back({k, id, 0});
        if (alive[k].cs.all_met()) extra.push_back({k, t2t::kEosId, 0});
        for (auto& e : extra)
          if (e.beam == k) e.lp = alive[k].lp + next[e.id];
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const C& a, const C& b) { return a.lp > b.lp; });
    std::vector<C> cands(all.begin(), all.begin() + std::min<size_t>(all.size(), 2 * K));
    for (const C& e : extra) {
      if (!std::isfinite(e.lp)) continue;
      if (std::none_of(cands.begin(), cands.end(),
                       [&](const C& c) { return c.beam == e.beam && c.id == e.id; }))
        cands.push_back(e);
    }
    auto grown = [&](const C& c) {
      H h{alive[c.beam].seq, c.lp, c.lp / penalty, c.id == t2t::kEosId,
          constrained ? alive[c.beam].cs.advance(phrases, c.id) : start};
      h.seq.push_back(c.id);
      return h;
    };
    // Alive: the best K that did not end (by bank rounds when constrained).
    std::vector<H> next_alive;
    if (constrained) {
      std::vector<std::pair<H, int64_t>> banked;  // by score, with the bank
      for (const C& c : cands)
        if (c.id != t2t::kEosId && std::isfinite(c.lp)) {
          H h = grown(c);
          const int64_t bank = h.cs.progress(phrases);
          banked.emplace_back(std::move(h), bank);
        }
      std::stable_sort(banked.begin(), banked.end(),
                       [](const auto& a, const auto& b) { return a.first.score > b.first.score; });
      std::map<int64_t, std::vector<size_t>> banks;  // bank -> members, best first
      for (size_t j = 0; j < banked.size(); ++j) banks[banked[j].second].push_back(j);
      std::vector<size_t> picked;
      for (size_t round = 0; static_cast<int64_t>(picked.size()) < K; ++round) {
        bool any = false;
        for (auto it = banks.rbegin(); it != banks.rend(); ++it) {
          if (round >= it->second.size()) continue;
          any = true;
          if (static_cast<int64_t>(picked.size()) < K) picked.push_back(it->second[round]);
        }
        if (!any) break;
      }
      std::sort(picked.begin(), picked.end());  // back to score order
      for (size_t j : picked) next_alive.push_back(banked[j].first);
    } else {
      for (const C& c : cands)
        if (c.id != t2t::kEosId && static_cast<int64_t>(next_alive.size()) < K)
          next_alive.push_back(grown(c));
    }
    while (static_cast<int64_t>(next_alive.size()) < K)
      next_alive.push_back({{0}, kNegInf, kNegInf, false, start});
    std::vector<H> pool = finished;
    for (auto& f : pool) f.seq.push_back(0);
    for (const C& c : cands) {
      H h = grown(c);
      if (!h.fin) h.score -= kBig;
      pool.push_back(h);
    }
    std::stable_sort(pool.begin(), pool.end(),
                     [](const H& a, const H& b) { return a.score > b.score; });
    finished.assign(pool.begin(), pool.begin() + K);
    alive = next_alive;
    // stop_early: the best finished score must beat the bound; without, the
    // lowest of K finished ones (T2T's reduce_max and reduce_min). The
    // bound is the best alive log-probability over the largest penalty;
    // with phrases, of the alive hypotheses that hold them all (none: no
    // bound).
    bool full = true;
    for (const auto& f : finished) full = full && f.fin;
    const double settled = o.stop_early ? (finished[0].fin ? finished[0].score : kNegInf)
                                        : (full ? finished[K - 1].score : kNegInf);
    double best_alive = alive[0].lp;
    if (constrained) {
      best_alive = kNegInf;
      for (const auto& a : alive)
        if (a.cs.all_met()) best_alive = std::max(best_alive, a.lp);
    }
    const bool met = settled > best_alive / t2t::length_penalty(decode_len, o.alpha);
    if (i + 1 >= decode_len || met) break;
  }
  auto strip = [](Ids s) {
    s.erase(std::find(s.begin(), s.end(), t2t::kEosId), s.end());
    return s;
  };
  std::vector<Hypothesis> out;
  for (const auto& f : finished)
    if (f.fin && f.score > -kBig && static_cast<int64_t>(out.size()) < o.num_return)
      out.push_back({strip(f.seq), f.score, true});
  std::stable_sort(alive.begin(), alive.end(), [&](const H& x, const H& y) {
    return x.cs.progress(phrases) > y.cs.progress(phrases);
  });
  for (const auto& a : alive)
    if (std::isfinite(a.lp) && static_cast<int64_t>(out.size()) < o.num_return)
      out.push_back({strip(a.seq), a.lp, false});
  return out;
}

// A phrase of `n` ids the model would rarely choose on its own.
Ids phrase_of(uint64_t seed, int64_t n, int64_t V) {
  Ids p;
  for (int64_t j = 0; j < n; ++j)
    p.push_back(2 + static_cast<int64_t>(t2t::test::mix(seed, j) % static_cast<uint64_t>(V - 2)));
  return p;
}

}  // namespace

TEST_CASE("constraint states follow phrases through a hypothesis", "[decode][constraints]") {
  const Phrases phrases = {{5, 6, 7}, {9}};
  auto s = ConstraintState::start(phrases);
  CHECK(s.next_ids(phrases) == Ids{5, 9});
  s = s.advance(phrases, 5);
  CHECK(s.progress(phrases) == 1);
  CHECK(s.next_ids(phrases) == Ids{6});
  s = s.advance(phrases, 4);  // left midway: starts over
  CHECK(s.progress(phrases) == 0);
  for (int64_t id : {5, 6, 7}) s = s.advance(phrases, id);
  CHECK(s.progress(phrases) == 3);
  CHECK_FALSE(s.all_met());
  CHECK(s.next_ids(phrases) == Ids{9});
  s = s.advance(phrases, 9);
  CHECK(s.all_met());
  CHECK(s.progress(phrases) == 4);
  CHECK(s.next_ids(phrases).empty());
  // An id that leaves one phrase may start another.
  auto t = ConstraintState::start(phrases).advance(phrases, 5).advance(phrases, 9);
  CHECK(t.met == std::vector<char>{0, 1});
}

TEST_CASE("a phrase's text is met however the tokens spell it", "[decode][constraints]") {
  // "新鲜" as ids 5 6; the vocabulary also has "新鲜空气" (7) and "要新" (8).
  const Phrases phrases = {{5, 6}, {9}};
  t2t::PhraseTexts texts;
  texts.terms = {"新鲜", "好"};
  texts.id_texts = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{
      "", "", "", "", "我", "新", "鲜", "新鲜空气", "要新", "好"});
  auto s = ConstraintState::start(phrases).advance(phrases, 7, &texts);
  CHECK(s.met == std::vector<char>{1, 0});
  CHECK(s.progress(phrases) == 2);
  CHECK(s.next_ids(phrases) == Ids{9});
  // Across tokens, and without texts only the ids count.
  s = ConstraintState::start(phrases).advance(phrases, 8, &texts).advance(phrases, 6, &texts);
  CHECK(s.met == std::vector<char>{1, 0});
  CHECK(ConstraintState::start(phrases).advance(phrases, 7).met == std::vector<char>{0, 0});
  // The ids still work, and a phrase under way that its text completes
  // is no longer under way.
  s = ConstraintState::start(phrases).advance(phrases, 5, &texts);
  CHECK(s.phrase == 0);
  s = s.advance(phrases, 6, &texts);
  CHECK(s.met == std::vector<char>{1, 0});
  CHECK(s.phrase == -1);
  CHECK(t2t::without_spaces(" 新 鲜\t空\xE3\x80\x80气\xE2\x96\x81!") == "新鲜空气!");
}

TEST_CASE("dynamic beam allocation takes banks in rounds, fullest first", "[decode][constraints]") {
  const float inf = std::numeric_limits<float>::infinity();
  // Scores and banks: bank 2 has one candidate, bank 1 two, bank 0 three.
  const std::vector<float> scores = {-1, -2, -3, -4, -5, -6, -inf};
  const std::vector<int64_t> banks = {0, 0, 1, 0, 1, 2, 2};
  CHECK(t2t::allocate_beams(scores, banks, 4) == Ids{5, 2, 0, 4});
  // Banks that run out leave their places to the others.
  CHECK(t2t::allocate_beams(scores, banks, 6) == Ids{5, 2, 0, 4, 1, 3});
  CHECK(t2t::allocate_beams(scores, banks, 10).size() == 6);  // -inf is no candidate
}

TEST_CASE("repeated n-grams and logit edits", "[decode]") {
  CHECK(t2t::repeated_ngram_ids({3, 4, 5, 3, 4}, 3) == Ids{5});
  CHECK(t2t::repeated_ngram_ids({3, 4, 5, 3}, 2) == Ids{4});
  CHECK(t2t::repeated_ngram_ids({3, 4}, 1) == Ids{3, 4});
  CHECK(t2t::repeated_ngram_ids({3}, 3).empty());
  CHECK(t2t::repeated_ngram_ids({3, 3, 3}, 0).empty());

  auto logits = torch::tensor({{1.0f, 2.0f, -1.0f, 0.5f}, {0.0f, 1.0f, 2.0f, 3.0f}});
  t2t::LogitEdits edits;
  edits.penalize(0, 1);
  edits.penalize(0, 2);
  edits.ban(0, 3);
  edits.ban(1, 2);
  edits.force(1, 2);  // a forced id outlives a ban
  edits.apply(logits, 2.0);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(logits[0][0].item<float>() == 1.0f);
  CHECK(logits[0][1].item<float>() == 1.0f);   // 2 / 2
  CHECK(logits[0][2].item<float>() == -2.0f);  // -1 * 2
  CHECK(logits[0][3].item<float>() == -inf);
  CHECK(logits[1][2].item<float>() == 2.0f);
  for (int v : {0, 1, 3}) CHECK(logits[1][v].item<float>() == -inf);
}

TEST_CASE("a target prefix starts every hypothesis and the search continues from it",
          "[decode][prefix]") {
  const int64_t V = 9;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const Ids input = {2, 3, static_cast<int64_t>(2 + seed % 6), t2t::kEosId};
    PrefixModel model(V, seed, 0.3);
    TargetGuide guide;
    guide.prefix = phrase_of(seed, 1 + seed % 3, V);
    for (int64_t K : {1, 3}) {
      SearchOptions o;
      o.beam_size = K;
      o.extra_length = 6;
      o.num_return = K;
      o.stop_early = K == 1;
      const int64_t len = static_cast<int64_t>(input.size()) + o.extra_length;
      const auto got = t2t::beam_search(model, padded_ids({input}), o, nullptr, {}, {guide});
      INFO("seed " << seed << " beam " << K);
      REQUIRE(!got[0].empty());
      for (const auto& h : got[0])
        CHECK(Ids(h.ids.begin(), h.ids.begin() + guide.prefix.size()) == guide.prefix);
      if (K == 1) {
        CHECK(got[0][0].ids == greedy_reference(model, input, guide, o, len));
      } else {
        const auto want = reference_guided_beam(model, input, V, guide, o, len);
        REQUIRE(got[0].size() == want.size());
        for (size_t j = 0; j < want.size(); ++j) {
          INFO("hypothesis " << j << " finished " << got[0][j].finished << " / " << want[j].finished);
          CHECK(got[0][j].ids == want[j].ids);
          CHECK(got[0][j].score == Approx(want[j].score).epsilon(1e-4));
        }
      }
    }
  }
}

TEST_CASE("constrained beam search holds every phrase and equals its plain statement",
          "[decode][constraints]") {
  const int64_t V = 11;
  int differs_from_free = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const Ids input = {4, 3, static_cast<int64_t>(2 + seed % 7), 5, t2t::kEosId};
    PrefixModel model(V, seed, 0.2);
    TargetGuide guide;
    const int64_t count = 1 + static_cast<int64_t>(seed % 3);
    for (int64_t q = 0; q < count; ++q)
      guide.constraints.push_back(phrase_of(seed * 31 + q, 1 + (seed + q) % 2, V));
    if (seed % 4 == 0) guide.prefix = phrase_of(seed * 7, 1, V);
    SearchOptions o;
    o.beam_size = 4;
    o.extra_length = 8;
    const int64_t len = static_cast<int64_t>(input.size()) + o.extra_length;
    const auto got = t2t::beam_search(model, padded_ids({input}), o, nullptr, {}, {guide});
    const auto want = reference_guided_beam(model, input, V, guide, o, len);
    const auto free = t2t::beam_search(model, padded_ids({input}), o);
    std::string g;
    for (auto& p : guide.constraints) { g += "["; for (auto x : p) g += std::to_string(x) + " "; g += "] "; }
    g += " prefix "; for (auto x : guide.prefix) g += std::to_string(x) + " ";
    g += " got "; for (auto x : got[0][0].ids) g += std::to_string(x) + " ";
    INFO("seed " << seed << " guide " << g);
    REQUIRE(got[0].size() == 1);
    REQUIRE(want.size() == 1);
    CHECK(got[0][0].ids == want[0].ids);
    CHECK(got[0][0].score == Approx(want[0].score).epsilon(1e-4));
    CHECK(got[0][0].finished);
    for (const auto& phrase : guide.constraints) CHECK(contains(got[0][0].ids, phrase));
    CHECK(got[0][0].constraints_met == std::vector<char>(guide.constraints.size(), 1));
    differs_from_free += got[0][0].ids != free[0][0].ids;
  }
  CHECK(differs_from_free >= 8);  // the phrases are not what the model says anyway
}

TEST_CASE("guides are per sentence: a batch equals its sentences alone, unguided ones unchanged",
          "[decode][constraints]") {
  const int64_t V = 10;
  PrefixModel model(V, 5, 0.3);
  const std::vector<Ids> inputs = {{4, 5, 6, t2t::kEosId}, {3, t2t::kEosId}, {7, 8, t2t::kEosId},
                                   {2, 9, 3, 4, 5, t2t::kEosId}};
  std::vector<TargetGuide> guides(inputs.size());
  guides[0].constraints = {{7, 8}};
  guides[2].prefix = {5};
  guides[2].constraints = {{3}, {9}};
  SearchOptions o;
  o.beam_size = 4;
  o.no_repeat_ngram_size = 2;
  for (bool drop : {true, false}) {
    o.drop_finished = drop;
    const auto batch = t2t::beam_search(model, padded_ids(inputs), o, nullptr, {}, guides);
    const auto unguided = t2t::beam_search(model, padded_ids(inputs), o);
    for (size_t s = 0; s < inputs.size(); ++s) {
      const auto alone = t2t::beam_search(model, padded_ids({inputs[s]}), o, nullptr, {}, {guides[s]});
      INFO("sentence " << s << " drop_finished " << drop);
      CHECK(batch[s][0].ids == alone[0][0].ids);
      CHECK(batch[s][0].score == Approx(alone[0][0].score).epsilon(1e-5));
      if (guides[s].empty()) CHECK(batch[s][0].ids == unguided[s][0].ids);
    }
  }
}

TEST_CASE("repetition guards equal their plain statement", "[decode]") {
  const int64_t V = 6;  // a small vocabulary repeats itself
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const Ids input = {2, 3, 4, t2t::kEosId};
    PrefixModel model(V, seed, -2.0);  // EOS unlikely: long outputs
    SearchOptions o;
    o.extra_length = 12;
    const int64_t len = static_cast<int64_t>(input.size()) + o.extra_length;
    for (int64_t n : {0, 1, 2, 3}) {
      for (double penalty : {1.0, 1.5}) {
        o.no_repeat_ngram_size = n;
        o.repetition_penalty = penalty;
        INFO("seed " << seed << " n " << n << " penalty " << penalty);
        o.beam_size = 1;
        const auto greedy = t2t::beam_search(model, padded_ids({input}), o);
        CHECK(greedy[0][0].ids == greedy_reference(model, input, TargetGuide(), o, len));
        o.beam_size = 3;
        const auto beam = t2t::beam_search(model, padded_ids({input}), o);
        const auto want = reference_guided_beam(model, input, V, TargetGuide(), o, len);
        CHECK(beam[0][0].ids == want[0].ids);
        if (n > 0) {
          const auto& ids = beam[0][0].ids;
          std::set<Ids> seen;
          for (size_t s = 0; s + n <= ids.size(); ++s)
            CHECK(seen.insert(Ids(ids.begin() + s, ids.begin() + s + n)).second);
        }
      }
    }
  }
}

TEST_CASE("each hypothesis carries the attention of its own steps", "[decode][alignment]") {
  const int64_t V = 9;
  PrefixModel model(V, 3, 0.4);
  const std::vector<Ids> inputs = {{4, 5, 6, 7, t2t::kEosId}, {3, t2t::kEosId},
                                   {2, 8, 6, t2t::kEosId}};
  SearchOptions o;
  o.alignment = true;
  o.extra_length = 5;
  for (int64_t K : {1, 4}) {
    for (bool drop : {true, false}) {
      o.beam_size = K;
      o.num_return = K;
      o.stop_early = K == 1;
      o.drop_finished = drop;
      const auto got = t2t::beam_search(model, padded_ids(inputs), o);
      for (size_t s = 0; s < inputs.size(); ++s) {
        for (const auto& h : got[s]) {
          const auto want = model.attended_positions(inputs[s], h.ids, h.finished);
          INFO("sentence " << s << " beam " << K);
          REQUIRE(h.attention.size() == want.size());
          for (size_t t = 0; t < want.size(); ++t) {
            REQUIRE(h.attention[t].size() == inputs[s].size());
            const auto at = std::max_element(h.attention[t].begin(), h.attention[t].end()) -
                            h.attention[t].begin();
            CHECK(at == want[t]);
          }
        }
      }
    }
  }
  // Off, nothing is carried, and the results are the same.
  o.beam_size = 4;
  o.num_return = 1;
  o.stop_early = true;
  const auto with = t2t::beam_search(model, padded_ids(inputs), o);
  o.alignment = false;
  const auto without = t2t::beam_search(model, padded_ids(inputs), o);
  for (size_t s = 0; s < inputs.size(); ++s) {
    CHECK(without[s][0].attention.empty());
    CHECK(with[s][0].ids == without[s][0].ids);
  }
}

TEST_CASE("guides the search cannot honour are refused by name", "[decode][constraints]") {
  PrefixModel model(8, 1, 0.0);
  const Ids input = {3, 4, t2t::kEosId};
  SearchOptions o;
  o.beam_size = 3;
  o.extra_length = 4;
  TargetGuide three;
  three.constraints = {{2}, {3}, {4}};
  CHECK_THROWS_WITH(t2t::beam_search(model, padded_ids({input}), o, nullptr, {}, {three}),
                    Catch::Contains("beam_size") && Catch::Contains(">= 4"));
  TargetGuide long_one;
  long_one.constraints = {{2, 3, 4, 5, 6, 7, 2}};  // 7 ids + EOS > 3 + 4
  CHECK_THROWS_WITH(t2t::beam_search(model, padded_ids({input}), o, nullptr, {}, {long_one}),
                    Catch::Contains("extra_length"));
  TargetGuide reserved;
  reserved.constraints = {{t2t::kEosId}};
  CHECK_THROWS_WITH(t2t::beam_search(model, padded_ids({input}), o, nullptr, {}, {reserved}),
                    Catch::Contains("reserved"));
  o.beam_size = 1;
  TargetGuide one;
  one.constraints = {{2}};
  CHECK_THROWS_WITH(t2t::beam_search(model, padded_ids({input}), o, nullptr, {}, {one}),
                    Catch::Contains("beam_size"));
  o.repetition_penalty = 0;
  CHECK_THROWS_WITH(t2t::beam_search(model, padded_ids({input}), o),
                    Catch::Contains("repetition_penalty"));
}

TEST_CASE("an ensemble averages its members' log-probabilities each step", "[decode][ensemble]") {
  const int64_t V = 9;
  auto a = std::make_shared<PrefixModel>(V, 11, 0.2);
  auto b = std::make_shared<PrefixModel>(V, 12, 0.2);
  t2t::EnsembleModel ensemble({a, b}, {1.0, 3.0}, {V, V});
  const std::vector<Ids> inputs = {{4, 5, t2t::kEosId}, {6, t2t::kEosId}};
  const auto x = padded_ids(inputs);
  auto sa = a->start_decoding(x), sb = b->start_decoding(x), se = ensemble.start_decoding(x);
  auto last = torch::zeros({2}, torch::kLong);
  for (int step = 0; step < 3; ++step) {
    const auto want = 0.25 * torch::log_softmax(a->decode_step(*sa, last), -1) +
                      0.75 * torch::log_softmax(b->decode_step(*sb, last), -1);
    const auto got = ensemble.decode_step(*se, last);
    CHECK(torch::allclose(got, want, 1e-5, 1e-6));
    // Reordered as one: swap the rows.
    const auto index = torch::tensor({1, 0}, torch::kLong);
    a->reorder_state(*sa, index);
    b->reorder_state(*sb, index);
    ensemble.reorder_state(*se, index);
    last = torch::tensor({3 + step, 5}, torch::kLong);
  }
  // A model with itself is the model.
  auto twin = std::make_shared<PrefixModel>(V, 11, 0.2);
  t2t::EnsembleModel same({a, twin}, {1.0, 1.0}, {V, V});
  SearchOptions o;
  o.alignment = true;
  const auto alone = t2t::beam_search(*a, x, o);
  const auto pair = t2t::beam_search(same, x, o);
  for (size_t s = 0; s < inputs.size(); ++s) {
    CHECK(pair[s][0].ids == alone[s][0].ids);
    CHECK(pair[s][0].score == Approx(alone[s][0].score).epsilon(1e-5));
    CHECK(pair[s][0].attention == alone[s][0].attention);
  }
  CHECK_THROWS_WITH(t2t::EnsembleModel({a, b}, {1.0, 1.0}, {V, V + 1}),
                    Catch::Contains("share their target vocabulary"));
  CHECK_THROWS_WITH(t2t::EnsembleModel({a}, {1.0}, {V}), Catch::Contains("at least two"));
  CHECK_THROWS_WITH(t2t::EnsembleModel({a, b}, {1.0, 0.0}, {V, V}), Catch::Contains("weight"));
}
