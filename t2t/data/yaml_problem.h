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
//
// Training data in parts, drawn by weight as training reads them
// (data_mix.h), each part its own shards (split "train-<name>"):
//
//   train:
//     - {name: real, source: train.en, target: train.zh}
//     - {name: bt, source: bt.en, target: mono.zh, weight: 0.5, tag: "<BT>"}
//
// A part takes weight (default 1) or epochs (passes over it per pass over
// the mix; every part or none), tag (a word written before each of its
// sources, kept whole by a sentencepiece vocabulary) and shards (default:
// shards' train, else 10).
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
