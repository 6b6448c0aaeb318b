#include "t2t/decode/beam_search.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "t2t/core/error.h"
#include "t2t/decode/sampling.h"
#include "t2t/decode/top_candidates.h"
#include "t2t/model/t2t_model.h"
#include "t2t/text/text_encoder.h"

namespace t2t {
namespace {

// T2T's stand-in for infinity: large enough to push a hypothesis below every
// real one, finite so that arithmetic on it stays finite.
constexpr double kInf = 1e7;

std::vector<int64_t> until_eos(const int64_t* ids, int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n && ids[i] != kEosId; ++i) out.push_back(ids[i]);
  return out;
}

// Which rows of a batch a search still decodes, and which sentence each is.
struct ActiveSet {
  std::vector<int64_t> sentence;      // row -> index into the caller's batch
  std::vector<int64_t> decode_length;  // per sentence of the caller's batch
  std::vector<char> settled;          // per sentence of the caller's batch

  // Rows [rows] whose sentence is not settled yet.
  std::vector<int64_t> open_rows() const {
    std::vector<int64_t> rows;
    for (size_t r = 0; r < sentence.size(); ++r)
      if (!settled[sentence[r]]) rows.push_back(static_cast<int64_t>(r));
    return rows;
  }
};

ActiveSet start(const torch::Tensor& inputs, int64_t extra_length, bool batch_length) {
  TORCH_CHECK(inputs.dim() == 2, "inputs must be [batch, input_len], got ", inputs.sizes());
  const auto lengths = inputs.ne(kPadId).sum(1).to(torch::kCPU, torch::kLong).contiguous();
  ActiveSet set;
  const int64_t batch = inputs.size(0);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = lengths.data_ptr<int64_t>()[b];
    if (n == 0) throw Error("beam_search: input row " + std::to_string(b) + " is empty; give every "
                            "sentence at least its EOS (empty lines are answered without a model)");
    set.sentence.push_back(b);
    const int64_t length = batch_length ? inputs.size(1) : n;
    set.decode_length.push_back(std::max<int64_t>(1, length + extra_length));
  }
  set.settled.assign(batch, 0);
  return set;
}

torch::Tensor rows_tensor(const std::vector<int64_t>& rows, const torch::Device& device) {
  return torch::tensor(rows, torch::kLong).to(device);
}

// ---- greedy ----------------------------------------------------------------

std::vector<std::vector<Hypothesis>> greedy(T2TModel& model, const torch::Tensor& inputs,
                                            const SearchOptions& options, SearchStats* stats,
                                            const std::vector<int64_t>& sample_keys) {
  ActiveSet set = start(inputs, options.extra_length, options.batch_decode_length);
  const auto device = inputs.device();
  std::vector<std::vector<Hypothesis>> results(set.sentence.size(), std::vector<Hypothesis>(1));
  auto state = model.start_decoding(inputs);
  torch::Tensor last = torch::zeros({inputs.size(0)}, torch::dtype(torch::kLong).device(device));
  for (int64_t step = 0;; ++step) {
    const auto logits = model.decode_step(*state, last);  // [rows, vocab]
    if (stats) {
      ++stats->steps;
      stats->row_steps += logits.size(0);
    }
    torch::Tensor best_lp, best_id;
    if (options.sampling.draws()) {
      // Each row draws its own number, keyed by its sentence (sampling.h).
      std::vector<double> uniforms;
      for (int64_t s : set.sentence)
        uniforms.push_back(sample_uniform(options.sampling.seed,
                                          sample_keys.empty() ? s : sample_keys[s], step));
      best_id = sample_ids(logits, options.sampling, torch::tensor(uniforms, torch::kDouble));
      // The score is the model's own log-probability of the drawn id, as
      // T2T's: the temperature shapes the draw, not the score.
      best_lp = torch::log_softmax(logits.to(torch::kFloat), -1)
                    .gather(1, best_id.unsqueeze(1))
                    .squeeze(1);
    } else {
      std::tie(best_lp, best_id) = torch::log_softmax(logits.to(torch::kFloat), -1).max(-1);
    }
    const auto ids = best_id.to(torch::kCPU).contiguous();
    const auto lps = best_lp.to(torch::kCPU, torch::kDouble).contiguous();
    for (int64_t r : set.open_rows()) {
      const int64_t s = set.sentence[r];
      const int64_t id = ids.data_ptr<int64_t>()[r];
      Hypothesis& h = results[s][0];
      h.score += lps.data_ptr<double>()[r];
      if (id == kEosId) {
        h.finished = true;
      } else {
        h.ids.push_back(id);
      }
      if (h.finished || step + 1 >= set.decode_length[s]) set.settled[s] = 1;
    }
    const auto open = set.open_rows();
    if (open.empty()) break;
    if (options.drop_finished && open.size() < set.sentence.size()) {
      const auto index = rows_tensor(open, device);
      model.reorder_state(*state, index);
      best_id = best_id.index_select(0, index);
      std::vector<int64_t> kept;
      for (int64_t r : open) kept.push_back(set.sentence[r]);
      set.sentence = std::move(kept);
    }
    last = best_id;
  }
  return results;
}

// ---- beam search -------------------------------------------------------------

// The search's tensors, rows = sentences still in the batch:
//   alive_seq [rows, beam, t], alive_log_probs [rows, beam]: the best
//     hypotheses without EOS, and their log-probabilities;
//   finished_seq [rows, beam, t], finished_scores [rows, beam],
//     finished_flags [rows, beam]: the best hypotheses that ended in EOS,
//     scored with the length penalty; slots never filled hold -kInf, unflagged.
struct Beams {
  torch::Tensor alive_seq, alive_log_probs;
  torch::Tensor finished_seq, finished_scores, finished_flags;
  torch::Tensor max_penalty;  // [rows]: the penalty at the sentence's decode length

  void keep(const torch::Tensor& rows) {
    for (auto* t : {&alive_seq, &alive_log_probs, &finished_seq, &finished_scores,
                    &finished_flags, &max_penalty})
      *t = t->index_select(0, rows);
  }
};

// Row r's result: its finished hypotheses, best first, then (when fewer than
// `count` finished, T2T's fallback) its best alive ones.
std::vector<Hypothesis> collect(const Beams& b, int64_t r, int64_t count) {
  const auto fin_seq = b.finished_seq[r].to(torch::kCPU).contiguous();
  const auto fin_scores = b.finished_scores[r].to(torch::kCPU, torch::kDouble).contiguous();
  const auto fin_flags = b.finished_flags[r].to(torch::kCPU).contiguous();
  const auto alive_seq = b.alive_seq[r].to(torch::kCPU).contiguous();
  const auto alive_lp = b.alive_log_probs[r].to(torch::kCPU, torch::kDouble).contiguous();
  const int64_t beam = fin_seq.size(0), t = fin_seq.size(1);
  std::vector<Hypothesis> out;
  for (int64_t k = 0; k < beam && static_cast<int64_t>(out.size()) < count; ++k) {
    const double score = fin_scores.data_ptr<double>()[k];
    if (!fin_flags.data_ptr<bool>()[k] || !(score > -kInf)) continue;
    out.push_back({until_eos(fin_seq.data_ptr<int64_t>() + k * t, t), score, true});
  }
  for (int64_t k = 0; k < beam && static_cast<int64_t>(out.size()) < count; ++k) {
    const double lp = alive_lp.data_ptr<double>()[k];
    if (!std::isfinite(lp)) continue;  // a slot no real hypothesis ever reached
    out.push_back({until_eos(alive_seq.data_ptr<int64_t>() + k * t, t), lp, false});
  }
  return out;
}

std::vector<std::vector<Hypothesis>> beam(T2TModel& model, const torch::Tensor& inputs,
                                          const SearchOptions& options, SearchStats* stats) {
  const int64_t K = options.beam_size;
  ActiveSet set = start(inputs, options.extra_length, options.batch_decode_length);
  const int64_t batch = inputs.size(0);
  const auto device = inputs.device();
  const auto longs = torch::dtype(torch::kLong).device(device);
  const auto floats = torch::dtype(torch::kFloat).device(device);
  std::vector<std::vector<Hypothesis>> results(batch);

  // The encoder runs once per sentence, and so does the first step: the K
  // beams of a sentence would all read the same empty history. Its state is
  // then copied to the sentence's K rows (row = sentence * K + beam).
  auto state = [&] {
    RECORD_USER_SCOPE("t2t::encode");
    return model.start_decoding(inputs);
  }();

  Beams b;
  b.alive_seq = torch::empty({batch, K, 0}, longs);
  // Only the first beam is real at the start; the others must never win.
  b.alive_log_probs = torch::full({batch, K}, -std::numeric_limits<float>::infinity(), floats);
  b.alive_log_probs.select(1, 0).fill_(0.0);
  b.finished_seq = torch::empty({batch, K, 0}, longs);
  b.finished_scores = torch::full({batch, K}, -kInf, floats);
  b.finished_flags = torch::zeros({batch, K}, torch::dtype(torch::kBool).device(device));
  std::vector<double> max_penalty;
  for (int64_t len : set.decode_length) max_penalty.push_back(length_penalty(len, options.alpha));
  b.max_penalty = torch::tensor(max_penalty, torch::kFloat).to(device);

  for (int64_t i = 0;; ++i) {
    const int64_t rows = b.alive_seq.size(0);
    const auto last = i == 0 ? torch::zeros({rows}, longs)
                             : b.alive_seq.select(2, i - 1).reshape({-1});
    auto logits = [&] {  // [rows * K, vocab]; [rows, vocab] first
      RECORD_USER_SCOPE("t2t::decode_step");
      return model.decode_step(*state, last);
    }();
    if (stats) {
      ++stats->steps;
      stats->row_steps += logits.size(0);
    }
    const int64_t V = logits.size(1);
    if (V < 2) throw Error("beam_search needs a target vocabulary of at least 2 ids");
    // Beams other than the first are dead at the first step: what they
    // would have read does not matter, as long as it is finite.
    if (i == 0) logits = logits.unsqueeze(1).expand({rows, K, V}).reshape({rows * K, V});

    // Grow every alive hypothesis by every id; keep the 2K best by penalised
    // score, enough that K of them are not EOS.
    const Candidates top =
        top_candidates(logits, b.alive_log_probs, 2 * K, length_penalty(i + 1, options.alpha));
    const auto& top_scores = top.scores;
    const auto& top_log_probs = top.log_probs;
    const auto& top_beam = top.beams;
    const auto& top_ids = top.ids;
    const auto top_seq =
        torch::cat({b.alive_seq.gather(1, top_beam.unsqueeze(2).expand({rows, 2 * K, i})),
                    top_ids.unsqueeze(2)},
                   2);  // [rows, 2K, i + 1]
    const auto top_finished = top_ids.eq(kEosId);
    const auto top_finished_f = top_finished.to(torch::kFloat);

    // Alive: the K best that did not just end.
    const auto alive_pick = std::get<1>((top_scores - top_finished_f * kInf).topk(K, 1));
    b.alive_seq = top_seq.gather(1, alive_pick.unsqueeze(2).expand({rows, K, i + 1}));
    // T2T lets a hypothesis that just ended stay alive (and be extended past
    // its EOS) when fewer than K of the 2K did not end, which happens only
    // while the beam is wider than the real hypotheses, e.g. at the first
    // steps with a beam >= vocabulary / 2. Such a slot is dead here.
    b.alive_log_probs = top_log_probs.gather(1, alive_pick)
                            .masked_fill(top_finished.gather(1, alive_pick),
                                         -std::numeric_limits<float>::infinity());
    // After the first step every beam of a sentence grows from its one row.
    const auto source_rows =
        i == 0 ? torch::arange(rows, longs).repeat_interleave(K)
               : (top_beam.gather(1, alive_pick) + torch::arange(rows, longs).mul(K).unsqueeze(1))
                     .reshape({-1});
    model.reorder_state(*state, source_rows);

    // Finished: the K best of the old finished ones and those that just ended.
    const auto all_seq = torch::cat(
        {torch::cat({b.finished_seq, torch::zeros({rows, K, 1}, longs)}, 2), top_seq}, 1);
    const auto all_scores =
        torch::cat({b.finished_scores, top_scores - (1.0 - top_finished_f) * kInf}, 1);
    const auto all_flags = torch::cat({b.finished_flags, top_finished}, 1);
    auto [fin_scores, fin_pick] = all_scores.topk(K, 1);
    b.finished_seq = all_seq.gather(1, fin_pick.unsqueeze(2).expand({rows, K, i + 1}));
    b.finished_scores = fin_scores;
    b.finished_flags = all_flags.gather(1, fin_pick);

    // T2T's _is_not_finished, per sentence. The best the best alive
    // hypothesis could still reach is its log-probability (which can only
    // fall) over the largest penalty, the one at the decode length. With
    // stop_early the sentence is settled once its best finished score beats
    // that (T2T's reduce_max); without, once every one of its K finished
    // slots holds a hypothesis and the lowest beats it (reduce_min), so that
    // no alive one can still enter them. Finished slots are sorted, best first.
    const auto settled_score =
        options.stop_early
            ? b.finished_scores.select(1, 0).masked_fill(
                  b.finished_flags.select(1, 0).logical_not(), -kInf)
            : b.finished_scores.select(1, K - 1).masked_fill(
                  b.finished_flags.all(1).logical_not(), -kInf);
    const auto bound_met =
        (settled_score > b.alive_log_probs.select(1, 0) / b.max_penalty).to(torch::kCPU);
    for (int64_t r : set.open_rows()) {
      const int64_t s = set.sentence[r];
      const bool met = bound_met.data_ptr<bool>()[r];
      if (i + 1 >= set.decode_length[s] || met) {
        results[s] = collect(b, r, options.num_return);
        set.settled[s] = 1;
      }
    }
    const auto open = set.open_rows();
    if (open.empty()) break;
    if (options.drop_finished && static_cast<int64_t>(open.size()) < rows) {
      const auto keep = rows_tensor(open, device);
      b.keep(keep);
      model.reorder_state(*state, (keep.mul(K).unsqueeze(1) + torch::arange(K, longs)).reshape({-1}));
      std::vector<int64_t> kept;
      for (int64_t r : open) kept.push_back(set.sentence[r]);
      set.sentence = std::move(kept);
    }
  }
  return results;
}

}  // namespace

double length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<std::vector<Hypothesis>> beam_search(T2TModel& model, const torch::Tensor& inputs,
                                                 const SearchOptions& options, SearchStats* stats,
                                                 const std::vector<int64_t>& sample_keys) {
  if (options.beam_size < 1)
    throw Error("beam_size must be at least 1, got " + std::to_string(options.beam_size));
  if (options.num_return < 1 || options.num_return > options.beam_size)
    throw Error("the number of beams to return must be in 1..beam_size (" +
                std::to_string(options.beam_size) + "), got " + std::to_string(options.num_return));
  if (options.sampling.random && options.beam_size > 1)
    throw Error("random sampling decodes greedily only (beam_size 1, as in T2T), got beam_size " +
                std::to_string(options.beam_size));
  if (!(options.sampling.temperature >= 0))
    throw Error("the sampling temperature must be >= 0");
  if (!sample_keys.empty() && static_cast<int64_t>(sample_keys.size()) != inputs.size(0))
    throw Error("beam_search: one sample key per input row is needed");
  if (inputs.size(0) == 0) return {};
  torch::NoGradGuard no_grad;
  return options.beam_size == 1 ? greedy(model, inputs, options, stats, sample_keys)
                                : beam(model, inputs, options, stats);
}

}  // namespace t2t
