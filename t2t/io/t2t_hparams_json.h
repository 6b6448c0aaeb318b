// The hparams.json Tensor2Tensor writes into its output directory. T2T
// writes it before its model adjusts its hparams, so a few values are not
// what the model ran with; t2t's model applies the same adjustments.
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

// Every key `hp` has takes the file's value; unknown keys and values of
// another type are reported, not applied. Throws t2t::Error naming the file
// when it is not a JSON object.
T2THparamsJson apply_t2t_hparams_json(HParams& hp, const std::string& path);

// Where a T2T run keeps its hparams: <dir>/hparams.json.
std::string t2t_hparams_json_path(const std::string& output_dir);

}  // namespace t2t
