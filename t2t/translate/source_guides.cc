#include "t2t/translate/source_guides.h"

#include <algorithm>

#include "t2t/core/error.h"
#include "t2t/translate/batch_translator.h"
#include "t2t/translate/glossary.h"

namespace t2t {

void GuidedSources::annotate(std::vector<Translation>& translations) const {
  for (size_t i = 0; i < translations.size() && i < terms.size(); ++i)
    translations[i].constraints = terms[i];
}

int64_t GuidedSources::met_count(const std::vector<Translation>& translations) const {
  int64_t met = 0;
  for (size_t i = 0; i < translations.size() && i < terms.size(); ++i) {
    if (terms[i].empty()) continue;
    const auto& t = translations[i];
    if (!t.constraints_met.empty() &&
        std::all_of(t.constraints_met[0].begin(), t.constraints_met[0].end(),
                    [](char m) { return m != 0; }))
      ++met;
  }
  return met;
}

GuidedSources guide_sources(const BatchTranslator& decoder, const std::vector<std::string>& texts,
                            const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<SourceGuide>& guides,
                            const std::vector<const Glossary*>& glossaries,
                            const SearchOptions& search, const std::string& where) {
  if (!guides.empty() && guides.size() != texts.size())
    throw Error(std::to_string(guides.size()) + " guides for " + std::to_string(texts.size()) +
                " texts: give one per text, or none");
  GuidedSources out;
  out.terms.resize(texts.size());
  std::vector<TargetGuide> encoded(texts.size());
  bool any = false;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (sources[i].empty()) continue;  // answered empty, without a search
    std::vector<std::string> glossary_terms;
    for (const Glossary* g : glossaries)
      if (g && !g->empty())
        for (auto& term : g->targets_for(texts[i])) glossary_terms.push_back(std::move(term));
    static const SourceGuide kNone;
    const SourceGuide& guide = guides.empty() ? kNone : guides[i];
    const std::string name = where + " " + std::to_string(i + 1);
    try {
      encoded[i] = decoder.encode_guide(guide, glossary_terms, &out.terms[i]);
      check_target_guide(encoded[i], search, static_cast<int64_t>(sources[i].size()), name);
    } catch (const OptionError& e) {
      const std::string& m = e.message_template();
      throw OptionError(e.option(), m.rfind(name, 0) == 0 ? m : name + ": " + m);
    }
    any = any || !encoded[i].empty();
    if (!encoded[i].constraints.empty()) ++out.constrained;
  }
  if (any) out.guides = std::move(encoded);
  return out;
}

}  // namespace t2t
