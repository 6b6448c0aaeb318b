// One way to ask for any of the corpus metrics t2t computes as sacreBLEU
// does (BLEU, chrF, chrF++, TER), for the tools, the trainer's validation
// and Python alike: a metric by name with its options, and its score with
// the line sacreBLEU prints and the signature.
#pragma once

#include <string>
#include <vector>

#include "t2t/metrics/chrf.h"
#include "t2t/metrics/references.h"
#include "t2t/metrics/sacrebleu.h"
#include "t2t/metrics/ter.h"

namespace t2t {

enum class MetricKind { kBleu, kChrf, kTer };

struct MetricSpec {
  MetricKind kind = MetricKind::kBleu;
  SacreBleuOptions bleu;
  ChrfOptions chrf;
  TerOptions ter;

  // "BLEU", "chrF2", "chrF2++", "TER": how results and tags name it.
  std::string display_name() const;
  bool higher_is_better() const { return kind != MetricKind::kTer; }
  // Case-insensitive scoring for every metric (BLEU and chrF lowercase,
  // TER is not case_sensitive).
  void set_lowercase(bool lowercase);
  bool lowercase() const;
};

// bleu, chrf, chrf++ or ter with sacreBLEU's defaults for it (chrf++ is
// chrF with word order 2). Throws t2t::Error naming the choices otherwise.
MetricSpec metric_spec(const std::string& name);
// "bleu, chrf, chrf++ or ter", for messages.
std::string metric_names();

struct MetricScore {
  std::string name;       // display_name()
  double score = 0.0;     // 0..100
  std::string details;    // after the score: BLEU's precisions, BP and lengths; else ""
  std::string signature;  // sacreBLEU's, naming t2t as the scorer

  // "BLEU = 23.45 56.7/30.1/18.2/11.0 (BP = ...)" or "chrF2 = 45.67".
  std::string to_string() const;
};

MetricScore corpus_score(const MetricSpec& spec, const std::vector<std::string>& hypotheses,
                         const References& references);
// Each hypothesis against its own references, for error analysis. BLEU
// takes the effective order here, as sacreBLEU's sentence-level BLEU does.
std::vector<MetricScore> sentence_scores(const MetricSpec& spec,
                                         const std::vector<std::string>& hypotheses,
                                         const References& references);

}  // namespace t2t
