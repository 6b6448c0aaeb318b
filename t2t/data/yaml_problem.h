// Problems declared in YAML, registered without writing code. A file in a
// --t2t_usr_dir (or named by it) with the extension .yaml declares one:
//
//   name: my_enzh                 # the --problem name
//   description: My en-zh data    # optional
//   source_language: en           # optional: translation vocab file suffixes
//   target_language: zh
//   train: {source: train.en, target: train.zh}   # paths relative to this file
//   dev:   {source: dev.en,   target: dev.zh}     # or {tsv: dev.tsv}
//   vocab: {type: sentencepiece, size: 8000, model_type: unigram, separate: true}
//   shards: {train: 10, dev: 1}
//   max_line_bytes: 4096          # optional
#pragma once

#include <string>

namespace t2t {

// Parses `path` and registers the problem it declares. Throws t2t::Error
// naming the file and the key at fault.
void register_yaml_problem(const std::string& path);

// Parses `path` as register_yaml_problem does, with the same errors, and
// registers nothing.
void check_yaml_problem(const std::string& path);

}  // namespace t2t
