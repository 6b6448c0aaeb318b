// Search over a T2TModel's incremental decoder: T2T's beam search with
// length penalty (tensor2tensor/utils/beam_search.py) and, for beam_size 1,
// greedy decoding as T2T's _fast_decode (argmax, or sample_ids). A sentence
// leaves the batch as soon as its result is settled.
//
// Where this differs from T2T, on purpose:
//  - The decode length is per sentence (its input length + extra_length),
//    not the batch's padded width, so a sentence's result does not depend on
//    its batch (SearchOptions::batch_decode_length asks for T2T's rule).
//  - Each sentence stops on its own, not when the whole batch does; the best
//    beam is the same (for alpha >= 0).
//  - A hypothesis that ends in EOS never stays alive (T2T's can, with a
//    beam of half the vocabulary or more).
//  - Greedy scores stop at EOS (T2T's keep adding while batch-mates run);
//    sampled ids are scored without the temperature, as in T2T.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "t2t/search/output_columns.h"
#include "t2t/search/search_options.h"
#include "t2t/search/target_guide.h"

namespace t2t {

class T2TModel;

struct Hypothesis {
  std::vector<int64_t> ids;  // target ids, EOS and anything after it removed
  // Beam search: log-probability / ((5 + length) / 6)^alpha once finished,
  // the plain log-probability for an unfinished one (as T2T returns it)
  // and in greedy decoding.
  double score = 0.0;
  bool finished = false;  // reached EOS
  // With SearchOptions::alignment: per output id (and the EOS of a finished
  // one), the probed attention over the input's ids (EOS included).
  std::vector<std::vector<float>> attention;
  // Per constraint phrase of the sentence's TargetGuide: whether it holds
  // it (every one for a finished hypothesis: it may end only then).
  std::vector<char> constraints_met;
};

struct SearchStats {
  int64_t steps = 0;      // decoder steps run
  int64_t row_steps = 0;  // sum over steps of the rows decoded (sentences × beams)
};

// T2T's length penalty ((5 + length) / 6)^alpha.
double length_penalty(int64_t length, double alpha);

// inputs [batch, input_len] int64 on the model's device, 0-padded, each row
// ending in EOS -> per sentence, the top options.num_return hypotheses, best
// first. The model must be in eval() mode. `stats` may be null. When
// sampling, row b draws under key sample_keys[b] (empty: b). Row b's output
// follows guides[b] (empty: no guide for any row); check_target_guide()
// refuses a guide the options cannot honour. With `columns` (a lexical
// shortlist's, lexical_shortlist.h) the search chooses among those target
// ids only, each normalised over them; the columns must hold every id a
// guide asks for.
std::vector<std::vector<Hypothesis>> beam_search(T2TModel& model, const torch::Tensor& inputs,
                                                 const SearchOptions& options,
                                                 SearchStats* stats = nullptr,
                                                 const std::vector<int64_t>& sample_keys = {},
                                                 const std::vector<TargetGuide>& guides = {},
                                                 const OutputColumns& columns = OutputColumns());

}  // namespace t2t
