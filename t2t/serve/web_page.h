// The page t2t-serve answers GET / with: a text box, the translation, the
// n-best list with scores, the word alignment drawn between source and
// target words, and a glossary box. One self-contained HTML document (no
// external assets) that talks to the server's public JSON API only.
#pragma once

#include <string>

namespace t2t {

const std::string& web_page();

// The short page answered at / when API keys are on and none was given.
const std::string& web_page_key_needed();

}  // namespace t2t
