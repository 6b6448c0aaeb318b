// A Translator's lexical shortlist (t2t/search/lexical_shortlist.h): which
// file, how it is read, and how much of it a batch takes.
#pragma once

#include <memory>
#include <string>

#include "t2t/search/lexical_shortlist.h"

namespace t2t {

class TextEncoder;

struct ShortlistOptions {
  // The file, a vmap or Marian's (told apart by their lines); a relative
  // name that is no file is looked for in the model directory too. "": no
  // shortlist.
  std::string file;
  // best: per source token; frequent: the always-allowed targets (a
  // Marian file: the vocabulary's first ids, 100 for -1, as Marian's).
  ShortlistLimits limits;
  double threshold = 0;  // a Marian file: entries of lower probability are dropped
};

// How a file names a vocabulary's tokens: by its own strings.
ShortlistTokens vocabulary_tokens(const TextEncoder& encoder);

// The file a shortlist option names: `file` itself, else `model_dir`/`file`
// for a relative name. Throws OptionError naming shortlist when neither is
// a file.
std::string shortlist_path(const std::string& file, const std::string& model_dir);

// The format of a shortlist file: vmap when its first line has a tab,
// marian when it has three fields, the last a number. Throws t2t::Error
// naming the file otherwise.
ShortlistFormat detect_shortlist_format(const std::string& path);

// Reads options.file for these vocabularies; its tokens are taken as the
// vocabularies' strings, or as "<id_N>" when its first token is one and
// the vocabulary has no such string. Logs what it read and skipped. Throws
// OptionError naming shortlist (or the limit at fault) with the file's error.
std::shared_ptr<const LexicalShortlist> load_shortlist(const ShortlistOptions& options,
                                                       const std::string& model_dir,
                                                       const TextEncoder& source,
                                                       const TextEncoder& target);

}  // namespace t2t
