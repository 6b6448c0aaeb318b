// Search over a T2TModel's incremental decoder: T2T's beam search with
// length penalty (tensor2tensor/utils/beam_search.py) and, for beam_size 1,
// greedy decoding, as T2T's Transformer does (_fast_decode): the argmax, or
// with SamplingOptions::random a token drawn by sample_ids (sampling.h).
//
// Both run the encoder once per batch, step the cached decoder, and take a
// sentence out of the batch as soon as its result is settled, so a batch
// costs what its longest translation costs, not batch × longest.
//
// Where this differs from T2T, on purpose:
//  - The decode length is per sentence: its own input length (EOS included)
//    + extra_length. T2T uses the padded width of the batch, which makes a
//    sentence's result depend on its neighbours; here a sentence gives the
//    same result in any batch, as in a batch of one in T2T.
//    SearchOptions::batch_decode_length asks for T2T's rule.
//  - T2T's stopping test looks at the whole batch; here each sentence stops
//    on its own. For the returned best beam that changes nothing: once the
//    test holds for a sentence, no later hypothesis can displace its best
//    finished one (for alpha >= 0).
//  - A hypothesis that ends in EOS never stays alive. T2T keeps one alive
//    (and extends it past its EOS) when fewer than beam_size of the
//    2·beam_size candidates go on, possible only while the beam is wider
//    than the real hypotheses (a beam of half the vocabulary or more).
//  - Greedy scores are the log-probability of the returned ids up to and
//    including EOS (of sampled ids too: the model's, without the sampling
//    temperature, as T2T scores them); T2T keeps adding the
//    log-probabilities of whatever a finished row generates while its
//    batch-mates are still running.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "t2t/search/search_options.h"

namespace t2t {

class T2TModel;

struct Hypothesis {
  std::vector<int64_t> ids;  // target ids, EOS and anything after it removed
  // Beam search: log-probability / ((5 + length) / 6)^alpha for a hypothesis
  // that reached EOS; for one that did not (the decode length ran out before
  // any hypothesis of its sentence finished), the plain log-probability, as
  // T2T returns it. Greedy: the plain log-probability.
  double score = 0.0;
  bool finished = false;  // reached EOS
};

struct SearchStats {
  int64_t steps = 0;      // decoder steps run
  int64_t row_steps = 0;  // sum over steps of the rows decoded (sentences × beams)
};

// T2T's length penalty ((5 + length) / 6)^alpha.
double length_penalty(int64_t length, double alpha);

// Throws OptionError, naming the option, for options the search cannot run.
// beam_search checks them itself; a caller that queues a request checks
// them first, so that a bad one fails alone, before it shares a batch.
void check_search_options(const SearchOptions& options);

// inputs [batch, input_len] int64 on the model's device, 0-padded, each row
// ending in EOS -> per sentence, the top options.num_return hypotheses, best
// first. The model must be in eval() mode. `stats` may be null.
// With options.sampling drawing (greedy only: beam_size > 1 is refused), row
// b draws under the key sample_keys[b], its position in the caller's whole
// input (sampling.h); empty: b itself.
std::vector<std::vector<Hypothesis>> beam_search(T2TModel& model, const torch::Tensor& inputs,
                                                 const SearchOptions& options,
                                                 SearchStats* stats = nullptr,
                                                 const std::vector<int64_t>& sample_keys = {});

}  // namespace t2t
