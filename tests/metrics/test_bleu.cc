#include <catch2/catch.hpp>

#include <array>
#include <cmath>

#include "t2t/metrics/bleu.h"

TEST_CASE("BLEU of identical sequences is 1, of disjoint ones the smoothing's floor, of none 0",
          "[bleu]") {
  t2t::BleuStats same;
  same.add({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  CHECK(same.score() == Approx(1.0));

  // No n-gram matches: every order is smoothed, 1 / (2^k * possible) for the
  // k-th order without a match, with 5, 4, 3 and 2 n-grams of each order.
  t2t::BleuStats disjoint;
  disjoint.add({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  const double smoothed = std::pow(1.0 / (2 * 5) / (4 * 4) / (8 * 3) / (16 * 2), 1.0 / 4);
  CHECK(disjoint.score() == Approx(smoothed).epsilon(1e-12));
  CHECK(disjoint.matches() == std::array<int64_t, 4>{0, 0, 0, 0});

  t2t::BleuStats none;
  CHECK(none.score() == 0.0);
}

TEST_CASE("BLEU counts clipped n-grams with T2T's smoothing and brevity penalty", "[bleu]") {
  // Reference 5 tokens, translation 4: unigrams 2/4 (7 twice, clipped to
  // once; 12 unmatched), bigrams 1/3, trigrams 0/2 -> 1/(2*2), 4-grams 0/1
  // -> 1/(4*1).
  t2t::BleuStats s;
  s.add({7, 8, 9, 10, 11}, {7, 8, 7, 12});
  const double geo = std::exp((std::log(2.0 / 4) + std::log(1.0 / 3) + std::log(1.0 / 4) +
                               std::log(1.0 / 4)) / 4);
  const double bp = std::exp(1.0 - 5.0 / 4.0);
  CHECK(s.score() == Approx(geo * bp).epsilon(1e-12));
  CHECK(s.reference_length() == 5);
  CHECK(s.translation_length() == 4);
}

TEST_CASE("BLEU is a corpus statistic, not a mean of sentence scores", "[bleu]") {
  t2t::BleuStats s;
  s.add({1, 2, 3, 4}, {1, 2, 3, 4});
  s.add({5, 6, 7, 8}, {5, 6, 9, 9});
  // unigrams 6/8, bigrams 4/6, trigrams 2/4, 4-grams 1/2; same lengths.
  const double expected = std::exp((std::log(6.0 / 8) + std::log(4.0 / 6) + std::log(2.0 / 4) +
                                    std::log(1.0 / 2)) / 4);
  CHECK(s.score() == Approx(expected).epsilon(1e-12));
}
