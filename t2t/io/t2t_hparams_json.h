// The hparams.json Tensor2Tensor writes into its --output_dir: what a T2T
// run was trained with, read so that a T2T model decodes (and trains on)
// with its own sizes and settings, whatever --hparams_set says.
//
// T2T writes it before its model copies and adjusts its hparams, so a few
// values are not what the model ran with (shared_embedding_and_softmax_weights
// stays true where vocabularies of different sizes untie it); t2t's model
// applies the same adjustments itself.
#pragma once

#include <string>
#include <vector>

namespace t2t {

class HParams;

struct T2THparamsJson {
  std::vector<std::string> changed;  // "key: the set's value -> the file's value"
  std::vector<std::string> unknown;  // keys t2t has no hparam for (left alone)
  std::vector<std::string> unusable;  // "key: why" for values t2t cannot take (kept the set's)
};

// Applies `path` onto `hp`: every key that `hp` has takes the file's value.
// Keys t2t lacks and values of a type the key cannot hold (T2T's {} for
// its modality functions, null) are reported, not applied. Throws
// t2t::Error naming the file when it is not a JSON object.
T2THparamsJson apply_t2t_hparams_json(HParams& hp, const std::string& path);

// Where a T2T run keeps its hparams: <dir>/hparams.json.
std::string t2t_hparams_json_path(const std::string& output_dir);

}  // namespace t2t
