#include "t2t/metrics/score.h"

#include <cstdio>

#include "t2t/core/error.h"

namespace t2t {

std::string MetricSpec::display_name() const {
  switch (kind) {
    case MetricKind::kBleu: return "BLEU";
    case MetricKind::kChrf: return chrf_name(chrf);
    case MetricKind::kTer: return "TER";
  }
  return "";
}

void MetricSpec::set_lowercase(bool lowercase) {
  bleu.lowercase = lowercase;
  chrf.lowercase = lowercase;
  ter.case_sensitive = !lowercase;
}

bool MetricSpec::lowercase() const {
  switch (kind) {
    case MetricKind::kBleu: return bleu.lowercase;
    case MetricKind::kChrf: return chrf.lowercase;
    case MetricKind::kTer: return !ter.case_sensitive;
  }
  return false;
}

std::string metric_names() { return "bleu, chrf, chrf++ or ter"; }

MetricSpec metric_spec(const std::string& name) {
  MetricSpec spec;
  if (name == "bleu") {
    spec.kind = MetricKind::kBleu;
  } else if (name == "chrf" || name == "chrf++") {
    spec.kind = MetricKind::kChrf;
    spec.chrf.word_order = name == "chrf++" ? 2 : 0;
  } else if (name == "ter") {
    spec.kind = MetricKind::kTer;
  } else {
    throw Error("unknown metric '" + name + "': use " + metric_names());
  }
  return spec;
}

std::string MetricScore::to_string() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", score);
  return name + " = " + buf + details;
}

namespace {

MetricScore from_bleu(const SacreBleuResult& r) {
  MetricScore s;
  s.name = "BLEU";
  s.score = r.score;
  // to_string() is "BLEU = 23.45 <details>": the details start after the score.
  const std::string text = r.to_string();
  const size_t end = text.find(' ', std::string("BLEU = ").size());
  s.details = end == std::string::npos ? "" : text.substr(end);
  s.signature = r.signature;
  return s;
}

MetricScore from_chrf(const ChrfResult& r) { return {r.name, r.score, "", r.signature}; }
MetricScore from_ter(const TerResult& r) { return {"TER", r.score, "", r.signature}; }

}  // namespace

MetricScore corpus_score(const MetricSpec& spec, const std::vector<std::string>& hypotheses,
                         const References& references) {
  switch (spec.kind) {
    case MetricKind::kBleu: return from_bleu(corpus_bleu(hypotheses, references, spec.bleu));
    case MetricKind::kChrf: return from_chrf(corpus_chrf(hypotheses, references, spec.chrf));
    case MetricKind::kTer: return from_ter(corpus_ter(hypotheses, references, spec.ter));
  }
  throw Error("unknown metric kind");
}

std::vector<MetricScore> sentence_scores(const MetricSpec& spec,
                                         const std::vector<std::string>& hypotheses,
                                         const References& references) {
  references.check_hypotheses(hypotheses.size(), spec.display_name());
  SacreBleuOptions bleu = spec.bleu;
  bleu.effective_order = true;
  std::vector<MetricScore> out;
  out.reserve(hypotheses.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const auto& refs = references.segment(i);
    switch (spec.kind) {
      case MetricKind::kBleu: out.push_back(from_bleu(sentence_bleu(hypotheses[i], refs, bleu))); break;
      case MetricKind::kChrf: out.push_back(from_chrf(sentence_chrf(hypotheses[i], refs, spec.chrf))); break;
      case MetricKind::kTer: out.push_back(from_ter(sentence_ter(hypotheses[i], refs, spec.ter))); break;
    }
  }
  return out;
}

}  // namespace t2t
