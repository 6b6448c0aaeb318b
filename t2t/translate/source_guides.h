// Sources' wishes for their outputs turned into what the search takes: each
// source's prefix and terms, with the terms glossaries give it, as target
// ids (TargetGuide), checked against the search before anything is
// decoded. One rule for every front end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t2t/search/search_options.h"
#include "t2t/search/target_guide.h"
#include "t2t/translate/translation.h"

namespace t2t {

class BatchTranslator;
class Glossary;

struct GuidedSources {
  std::vector<TargetGuide> guides;  // one per source, or none when no source has one
  std::vector<std::vector<std::string>> terms;  // per source: each constraint's text
  int64_t constrained = 0;                     // sources with at least one term

  // Sets each translation's `constraints` to its source's terms.
  void annotate(std::vector<Translation>& translations) const;
  // Sources with terms whose best hypothesis holds every one.
  int64_t met_count(const std::vector<Translation>& translations) const;
};

// texts[i] (encoded as sources[i]; empty sources get no guide) with
// guides[i] (or none when `guides` is empty) and the terms of every
// glossary for texts[i]. Throws OptionError naming prefix or constraints,
// and `where` + " " + (i + 1), for a guide the search cannot honour.
GuidedSources guide_sources(const BatchTranslator& decoder, const std::vector<std::string>& texts,
                            const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<SourceGuide>& guides,
                            const std::vector<const Glossary*>& glossaries,
                            const SearchOptions& search, const std::string& where);

}  // namespace t2t
