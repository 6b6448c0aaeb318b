#include "t2t/search/beam_search.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "t2t/core/error.h"
#include "t2t/search/constrained_beams.h"
#include "t2t/search/constraint_state.h"
#include "t2t/search/logit_edits.h"
#include "t2t/search/sampling.h"
#include "t2t/search/top_candidates.h"
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
  std::vector<int64_t> input_length;   // per sentence: its ids, EOS included
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
    set.input_length.push_back(n);
    const int64_t length = batch_length ? inputs.size(1) : n;
    set.decode_length.push_back(std::max<int64_t>(1, length + extra_length));
  }
  set.settled.assign(batch, 0);
  return set;
}

torch::Tensor rows_tensor(const std::vector<int64_t>& rows, const torch::Device& device) {
  return torch::tensor(rows, torch::kLong).to(device);
}

const TargetGuide kNoGuide;

const TargetGuide& guide_of(const std::vector<TargetGuide>& guides, int64_t sentence) {
  return guides.empty() ? kNoGuide : guides[sentence];
}

// Whether any step's logits need LogitEdits.
bool edits_logits(const SearchOptions& options, const std::vector<TargetGuide>& guides) {
  if (options.no_repeat_ngram_size > 0 || options.repetition_penalty != 1.0) return true;
  for (const auto& g : guides)
    if (!g.empty()) return true;
  return false;
}

// The target ids a search chooses among: every id, or a shortlist's
// columns (on the model's device), which the model computes alone where it
// can (T2TModel::restrict_output) and which are selected from its logits
// where it cannot.
struct StepColumns {
  const OutputColumns& set;
  torch::Tensor ids;  // undefined for the whole vocabulary
  bool by_model = false;

  StepColumns(T2TModel& model, DecoderState& state, const OutputColumns& columns,
              const torch::Device& device)
      : set(columns) {
    if (columns.whole()) return;
    ids = torch::tensor(columns.ids(), torch::kLong).to(device);
    by_model = model.restrict_output(state, ids);
  }
  // A step's logits over the columns.
  torch::Tensor select(const torch::Tensor& logits) const {
    return ids.defined() && !by_model ? logits.index_select(1, ids) : logits;
  }
  // Columns [n] on the device -> their ids.
  torch::Tensor to_ids(const torch::Tensor& columns) const {
    return ids.defined() ? ids.index_select(0, columns) : columns;
  }
  // The column of an id the search must be able to produce.
  int64_t column(int64_t id) const {
    const int64_t c = set.column(id);
    if (c < 0)
      throw Error("beam_search: target id " + std::to_string(id) + " is asked for but is not "
                  "among the shortlist's columns");
    return c;
  }
};

// What step `step` changes in logits row `row`, whose hypothesis holds
// `ids` and stands at `constraints` with its guide's phrases: the prefix
// first, then the repetition guards, and no EOS before every phrase is met.
// Ids outside the columns need no ban and take no penalty.
void edit_row(LogitEdits& edits, int64_t row, int64_t step, const std::vector<int64_t>& ids,
              const TargetGuide& guide, const ConstraintState* constraints,
              const SearchOptions& options, const StepColumns& columns) {
  if (step < static_cast<int64_t>(guide.prefix.size())) {
    edits.force(row, columns.column(guide.prefix[step]));
    return;
  }
  for (int64_t id : repeated_ngram_ids(ids, options.no_repeat_ngram_size))
    if (const int64_t c = columns.set.column(id); c >= 0) edits.ban(row, c);
  if (options.repetition_penalty != 1.0) {
    std::vector<int64_t> distinct = ids;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (int64_t id : distinct)
      if (const int64_t c = columns.set.column(id); c >= 0) edits.penalize(row, c);
  }
  if (constraints && !constraints->all_met()) edits.ban(row, columns.column(kEosId));
}

// The probed attention of a step on the CPU ([rows, input_len] float32), or
// an undefined tensor when none was asked for.
torch::Tensor step_attention(const DecoderState& state) {
  if (!state.probe) return torch::Tensor();
  TORCH_CHECK(state.attention.defined(), "the model did not report the attention asked for");
  return state.attention.to(torch::kCPU, torch::kFloat).contiguous();
}

// Row `row` of a step's attention, its first `length` entries appended to
// `out`.
void append_attention(std::vector<float>& out, const torch::Tensor& attention, int64_t row,
                      int64_t length) {
  const float* p = attention.data_ptr<float>() + row * attention.size(1);
  out.insert(out.end(), p, p + length);
}

std::vector<std::vector<float>> attention_rows(const std::vector<float>& flat, int64_t length) {
  std::vector<std::vector<float>> rows;
  for (size_t at = 0; length > 0 && at + length <= flat.size(); at += length)
    rows.emplace_back(flat.begin() + at, flat.begin() + at + length);
  return rows;
}

// ---- greedy ----------------------------------------------------------------

std::vector<std::vector<Hypothesis>> greedy(T2TModel& model, const torch::Tensor& inputs,
                                            const SearchOptions& options, SearchStats* stats,
                                            const std::vector<int64_t>& sample_keys,
                                            const std::vector<TargetGuide>& guides,
                                            const OutputColumns& output_columns) {
  ActiveSet set = start(inputs, options.extra_length, options.batch_decode_length);
  const auto device = inputs.device();
  std::vector<std::vector<Hypothesis>> results(set.sentence.size(), std::vector<Hypothesis>(1));
  auto state = model.start_decoding(inputs);
  if (options.alignment) state->probe = options.alignment_probe;
  const StepColumns columns(model, *state, output_columns, device);
  const bool edits = edits_logits(options, guides);
  std::vector<std::vector<float>> attention(set.sentence.size());
  torch::Tensor last = torch::zeros({inputs.size(0)}, torch::dtype(torch::kLong).device(device));
  for (int64_t step = 0;; ++step) {
    auto logits = columns.select(model.decode_step(*state, last));  // [rows, columns]
    if (edits) {
      LogitEdits row_edits;
      for (size_t r = 0; r < set.sentence.size(); ++r) {
        const int64_t s = set.sentence[r];
        edit_row(row_edits, static_cast<int64_t>(r), step, results[s][0].ids, guide_of(guides, s),
                 nullptr, options, columns);
      }
      row_edits.apply(logits, options.repetition_penalty);
    }
    const auto probed = step_attention(*state);
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
    best_id = columns.to_ids(best_id);
    const auto ids = best_id.to(torch::kCPU).contiguous();
    const auto lps = best_lp.to(torch::kCPU, torch::kDouble).contiguous();
    for (int64_t r : set.open_rows()) {
      const int64_t s = set.sentence[r];
      const int64_t id = ids.data_ptr<int64_t>()[r];
      Hypothesis& h = results[s][0];
      h.score += lps.data_ptr<double>()[r];
      if (probed.defined()) append_attention(attention[s], probed, r, set.input_length[s]);
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
  if (options.alignment)
    for (size_t s = 0; s < results.size(); ++s)
      results[s][0].attention = attention_rows(attention[s], set.input_length[s]);
  return results;
}

// ---- beam search -------------------------------------------------------------

// One hypothesis of the search: its ids so far (EOS included for a finished
// one) and its log-probability (alive) or its penalised score (finished).
struct Beam {
  std::vector<int64_t> ids;
  float value = 0;
  bool flag = false;  // finished slots: holds a hypothesis that ended in EOS
  ConstraintState constraints;  // with a guide's constraints only
  std::vector<float> attention;  // with SearchOptions::alignment: [steps, input length]

  Beam() = default;
  Beam(std::vector<int64_t> ids, float value, bool flag)
      : ids(std::move(ids)), value(value), flag(flag) {}
};

// A sentence's beams: `alive` the best hypotheses without EOS, `finished`
// the best that ended in EOS, best first; finished slots never filled hold
// -kInf, unflagged. Plain C++ on the CPU: the bookkeeping of a step is a
// few hundred numbers, which tensor ops would spend more time launching than
// computing, and the model's device only sees the rows to run.
struct SentenceBeams {
  std::vector<Beam> alive, finished;
  float max_penalty = 1;  // the penalty at the sentence's decode length
  // For SearchOptions::patience: hypotheses that ended among the beam_size
  // best candidates of a step, so far, and whether the best one of a step
  // ever ended.
  int64_t ended = 0;
  bool best_ended = false;
};

// Row r's result: its finished hypotheses, best first, then (when fewer than
// `count` finished, T2T's fallback) its best alive ones.
std::vector<Hypothesis> collect(const SentenceBeams& b, int64_t count, int64_t input_length,
                                const Phrases& phrases) {
  std::vector<Hypothesis> out;
  auto add = [&](const Beam& h, bool finished) {
    Hypothesis hyp{until_eos(h.ids.data(), static_cast<int64_t>(h.ids.size())), h.value, finished};
    hyp.attention = attention_rows(h.attention, input_length);
    hyp.constraints_met = h.constraints.met;
    out.push_back(std::move(hyp));
  };
  for (const Beam& h : b.finished) {
    if (static_cast<int64_t>(out.size()) >= count) break;
    if (!h.flag || !(h.value > -kInf)) continue;
    add(h, true);
  }
  // T2T's fallback, the best alive ones; with constraints, those that met
  // more of them first.
  std::vector<const Beam*> alive;
  for (const Beam& h : b.alive)
    if (std::isfinite(h.value)) alive.push_back(&h);  // not a slot no hypothesis reached
  if (!phrases.empty())
    std::stable_sort(alive.begin(), alive.end(), [&](const Beam* x, const Beam* y) {
      return x->constraints.progress(phrases) > y->constraints.progress(phrases);
    });
  for (const Beam* h : alive) {
    if (static_cast<int64_t>(out.size()) >= count) break;
    add(*h, false);
  }
  return out;
}

// The `count` best of `n` values, best first, ties to the lower index (as
// TensorFlow's top_k, which T2T's search uses).
std::vector<int64_t> best_indices(const float* values, int64_t n, int64_t count) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return values[a] > values[b]; });
  order.resize(std::min(count, n));
  return order;
}

// The candidates of a step on the CPU, [rows, 4, count] as doubles (score,
// log-probability, beam, id: ids and beams are exact in a double), in one
// copy from another device.
std::vector<double> candidates_on_cpu(const Candidates& top) {
  const int64_t rows = top.scores.size(0), count = top.scores.size(1);
  std::vector<double> out(rows * 4 * count);
  if (top.scores.device().is_cpu()) {
    const auto scores = top.scores.to(torch::kFloat).contiguous();
    const auto log_probs = top.log_probs.to(torch::kFloat).contiguous();
    const auto beams = top.beams.to(torch::kLong).contiguous();
    const auto ids = top.ids.to(torch::kLong).contiguous();
    const float* s = scores.data_ptr<float>();
    const float* lp = log_probs.data_ptr<float>();
    const int64_t* b = beams.data_ptr<int64_t>();
    const int64_t* id = ids.data_ptr<int64_t>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < count; ++j) {
        double* c = out.data() + r * 4 * count + j;
        const int64_t at = r * count + j;
        c[0] = s[at];
        c[count] = lp[at];
        c[2 * count] = static_cast<double>(b[at]);
        c[3 * count] = static_cast<double>(id[at]);
      }
    return out;
  }
  const auto all = torch::stack({top.scores.to(torch::kDouble), top.log_probs.to(torch::kDouble),
                                 top.beams.to(torch::kDouble), top.ids.to(torch::kDouble)},
                                1)
                       .to(torch::kCPU)
                       .contiguous();
  std::copy_n(all.data_ptr<double>(), out.size(), out.data());
  return out;
}

// One candidate of a step: hypothesis `beam` grown by `id`.
struct Candidate {
  float score = 0;     // log_prob / the step's length penalty
  float log_prob = 0;
  int64_t beam = 0;
  int64_t id = 0;
};

// The ids a constrained sentence's beams must be able to take beside the
// step's best candidates, with their log-probabilities: per alive beam, its
// most likely id, each id that makes progress through the phrases, and EOS
// once it has met them all (else a hypothesis that took long to meet them
// might never be offered its end).
struct ExtraCandidates {
  std::vector<std::vector<Candidate>> per_row;  // per row of the batch
};

ExtraCandidates constraint_candidates(const torch::Tensor& logits,
                                      const std::vector<SentenceBeams>& beams,
                                      const std::vector<int64_t>& sentence,
                                      const std::vector<TargetGuide>& guides, int64_t step,
                                      int64_t K, const StepColumns& columns) {
  ExtraCandidates extra;
  extra.per_row.resize(beams.size());
  std::vector<int64_t> rows, beam_of, row_of;  // one entry per (row, beam) asked about
  for (size_t r = 0; r < beams.size(); ++r) {
    const TargetGuide& g = guide_of(guides, sentence[r]);
    if (g.constraints.empty() || step < static_cast<int64_t>(g.prefix.size())) continue;
    for (int64_t k = 0; k < (step == 0 ? 1 : K); ++k) {
      if (!std::isfinite(beams[r].alive[k].value)) continue;
      rows.push_back(step == 0 ? static_cast<int64_t>(r) : static_cast<int64_t>(r) * K + k);
      beam_of.push_back(k);
      row_of.push_back(static_cast<int64_t>(r));
    }
  }
  if (rows.empty()) return extra;
  const auto device = logits.device();
  const auto log_probs =
      torch::log_softmax(logits.index_select(0, rows_tensor(rows, device)).to(torch::kFloat), -1);
  const auto best = log_probs.max(-1);
  std::vector<int64_t> ask_row, ask_id;
  for (size_t j = 0; j < rows.size(); ++j) {
    const auto& b = beams[row_of[j]];
    const ConstraintState& cs = b.alive[beam_of[j]].constraints;
    std::vector<int64_t> ids = cs.next_ids(guide_of(guides, sentence[row_of[j]]).constraints);
    if (cs.all_met()) ids.push_back(kEosId);
    for (int64_t id : ids) {
      ask_row.push_back(static_cast<int64_t>(j));
      ask_id.push_back(id);
    }
  }
  std::vector<int64_t> ask_column;
  for (int64_t id : ask_id) ask_column.push_back(columns.column(id));
  const auto best_lp = std::get<0>(best).to(torch::kCPU).contiguous();
  const auto best_id = std::get<1>(best).to(torch::kCPU).contiguous();
  torch::Tensor asked;
  if (!ask_row.empty())
    asked = log_probs.index({rows_tensor(ask_row, device), rows_tensor(ask_column, device)})
                .to(torch::kCPU)
                .contiguous();
  for (size_t j = 0; j < rows.size(); ++j) {
    const float base = beams[row_of[j]].alive[beam_of[j]].value;
    extra.per_row[row_of[j]].push_back({0, base + best_lp.data_ptr<float>()[j], beam_of[j],
                                        columns.set.id(best_id.data_ptr<int64_t>()[j])});
  }
  for (size_t a = 0; a < ask_row.size(); ++a) {
    const int64_t j = ask_row[a];
    const float base = beams[row_of[j]].alive[beam_of[j]].value;
    extra.per_row[row_of[j]].push_back(
        {0, base + asked.data_ptr<float>()[a], beam_of[j], ask_id[a]});
  }
  return extra;
}

std::vector<std::vector<Hypothesis>> beam(T2TModel& model, const torch::Tensor& inputs,
                                          const SearchOptions& options, SearchStats* stats,
                                          const std::vector<TargetGuide>& guides,
                                          const OutputColumns& output_columns) {
  const int64_t K = options.beam_size, count = 2 * K;
  // SearchOptions::patience: how many ended hypotheses settle a sentence
  // (capped where llround stays defined: no search ends 1e15 of them).
  const int64_t enough_ended =
      options.patience > 0
          ? std::max<int64_t>(1, std::llround(std::min(options.patience * K, 1e15)))
          : 0;
  ActiveSet set = start(inputs, options.extra_length, options.batch_decode_length);
  const int64_t batch = inputs.size(0);
  const auto device = inputs.device();
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const float inf = static_cast<float>(kInf);
  const bool edits = edits_logits(options, guides);
  std::vector<std::vector<Hypothesis>> results(batch);

  // The encoder runs once per sentence, and so does the first step: the K
  // beams of a sentence would all read the same empty history. Its state is
  // then copied to the sentence's K rows (row = sentence * K + beam).
  auto state = [&] {
    RECORD_USER_SCOPE("t2t::encode");
    return model.start_decoding(inputs);
  }();
  if (options.alignment) state->probe = options.alignment_probe;
  const StepColumns columns(model, *state, output_columns, device);

  // Indexed by row (the sentences still in the batch, in order).
  std::vector<SentenceBeams> beams(batch);
  for (int64_t r = 0; r < batch; ++r) {
    auto& b = beams[r];
    // Only the first beam is real at the start; the others must never win.
    Beam dead({}, kNegInf, false);
    dead.constraints = ConstraintState::start(guide_of(guides, r).constraints);
    b.alive.assign(K, dead);
    b.alive[0].value = 0;
    b.finished.assign(K, Beam({}, -inf, false));
    b.max_penalty = static_cast<float>(length_penalty(set.decode_length[r], options.alpha));
  }

  std::vector<float> alive_log_probs;
  std::vector<int64_t> last_ids;
  for (int64_t i = 0;; ++i) {
    const int64_t rows = static_cast<int64_t>(beams.size());
    last_ids.assign(i == 0 ? rows : rows * K, 0);
    if (i > 0)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < K; ++k) last_ids[r * K + k] = beams[r].alive[k].ids.back();
    const auto last = torch::tensor(last_ids, torch::kLong).to(device);
    auto logits = [&] {  // [rows * K, columns]; [rows, columns] first
      RECORD_USER_SCOPE("t2t::decode_step");
      return columns.select(model.decode_step(*state, last));
    }();
    if (stats) {
      ++stats->steps;
      stats->row_steps += logits.size(0);
    }
    const int64_t V = logits.size(1);
    if (V < 2) throw Error("beam_search needs a target vocabulary of at least 2 ids");
    if (edits) {
      LogitEdits row_edits;
      for (int64_t r = 0; r < rows; ++r) {
        const TargetGuide& g = guide_of(guides, set.sentence[r]);
        for (int64_t k = 0; k < (i == 0 ? 1 : K); ++k) {
          const Beam& a = beams[r].alive[k];
          if (!std::isfinite(a.value)) continue;
          edit_row(row_edits, i == 0 ? r : r * K + k, i, a.ids, g,
                   g.constraints.empty() ? nullptr : &a.constraints, options, columns);
        }
      }
      row_edits.apply(logits, options.repetition_penalty);
    }
    const auto probed = step_attention(*state);
    const ExtraCandidates extra =
        constraint_candidates(logits, beams, set.sentence, guides, i, K, columns);
    // Beams other than the first are dead at the first step: what they
    // would have read does not matter, as long as it is finite.
    if (i == 0) logits = logits.unsqueeze(1).expand({rows, K, V}).reshape({rows * K, V});

    // Grow every alive hypothesis by every id; keep the 2K best by penalised
    // score, enough that K of them are not EOS.
    alive_log_probs.resize(rows * K);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < K; ++k) alive_log_probs[r * K + k] = beams[r].alive[k].value;
    const auto alive_tensor =
        torch::from_blob(alive_log_probs.data(), {rows, K}, torch::kFloat).to(device);
    const double penalty = length_penalty(i + 1, options.alpha);
    const auto top = candidates_on_cpu(top_candidates(logits, alive_tensor, count, penalty));

    RECORD_USER_SCOPE("t2t::beam_bookkeeping");
    std::vector<int64_t> source_rows;  // per new row, the row of the state it continues
    source_rows.reserve(rows * K);
    std::vector<Candidate> cands;
    std::vector<float> alive_key, finished_key;
    std::vector<int64_t> open;
    for (int64_t r = 0; r < rows; ++r) {
      const double* c = top.data() + r * 4 * count;
      cands.clear();
      for (int64_t j = 0; j < count; ++j)
        cands.push_back({static_cast<float>(c[j]), static_cast<float>(c[count + j]),
                         static_cast<int64_t>(c[2 * count + j]),
                         columns.set.id(static_cast<int64_t>(c[3 * count + j]))});
      SentenceBeams& b = beams[r];
      const TargetGuide& guide = guide_of(guides, set.sentence[r]);
      const bool constrained = !guide.constraints.empty();
      for (Candidate e : extra.per_row[r]) {
        if (!std::isfinite(e.log_prob)) continue;
        const bool known = std::any_of(cands.begin(), cands.end(), [&](const Candidate& x) {
          return x.beam == e.beam && x.id == e.id;
        });
        if (known) continue;
        e.score = static_cast<float>(e.log_prob / penalty);
        cands.push_back(e);
      }
      const auto n = static_cast<int64_t>(cands.size());
      // A candidate's ids: its beam's, then its own; and so on.
      auto grown = [&](const Candidate& x) {
        const Beam& from = b.alive[x.beam];
        Beam g(from.ids, x.log_prob, x.id == kEosId);
        g.ids.push_back(x.id);
        if (constrained)
          g.constraints =
              from.constraints.advance(guide.constraints, x.id, &guide.constraint_texts);
        if (probed.defined()) {
          g.attention = from.attention;
          append_attention(g.attention, probed, i == 0 ? r : r * K + x.beam,
                           set.input_length[set.sentence[r]]);
        }
        return g;
      };
      // Alive: the K best that did not just end. T2T lets a hypothesis that
      // just ended stay alive (and be extended past its EOS) when fewer
      // than K of the 2K did not end, which happens only while the beam is
      // wider than the real hypotheses, e.g. at the first steps with a
      // beam >= vocabulary / 2. Such a slot is dead here.
      alive_key.resize(n);
      for (int64_t j = 0; j < n; ++j)
        alive_key[j] = cands[j].score - (cands[j].id == kEosId ? inf : 0.0f);
      std::vector<int64_t> alive_pick;
      if (constrained) {
        // Dynamic beam allocation over the candidates that did not end, by
        // the constraint ids each has produced; then best first.
        std::vector<float> scores(n, kNegInf);
        std::vector<int64_t> banks(n, 0);
        for (int64_t j = 0; j < n; ++j) {
          if (cands[j].id == kEosId || !std::isfinite(cands[j].score)) continue;
          scores[j] = cands[j].score;
          banks[j] = b.alive[cands[j].beam]
                         .constraints.advance(guide.constraints, cands[j].id,
                                              &guide.constraint_texts)
                         .progress(guide.constraints);
        }
        alive_pick = allocate_beams(scores, banks, K);
        std::stable_sort(alive_pick.begin(), alive_pick.end(),
                         [&](int64_t x, int64_t y) { return scores[x] > scores[y]; });
        // Slots no candidate fills stay dead.
        while (static_cast<int64_t>(alive_pick.size()) < K) alive_pick.push_back(-1);
      } else {
        alive_pick = best_indices(alive_key.data(), n, K);
      }
      // Finished: the K best of the old finished ones and those that just
      // ended (the others scored -kInf below them, unflagged).
      finished_key.resize(K + n);
      for (int64_t k = 0; k < K; ++k) finished_key[k] = b.finished[k].value;
      for (int64_t j = 0; j < n; ++j)
        finished_key[K + j] = cands[j].score - (cands[j].id == kEosId ? 0.0f : inf);
      std::vector<Beam> finished(K);
      const auto fin_pick = best_indices(finished_key.data(), K + n, K);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t p = fin_pick[k];
        if (p < K) {
          finished[k] = b.finished[p];
          finished[k].ids.push_back(0);  // T2T pads finished sequences as they grow
        } else {
          finished[k] = grown(cands[p - K]);
        }
        finished[k].value = finished_key[p];
      }
      std::vector<Beam> alive(K);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t p = alive_pick[k] >= 0 ? alive_pick[k] : 0;
        alive[k] = grown(cands[p]);
        alive[k].flag = false;
        if (alive_pick[k] < 0 || cands[p].id == kEosId) alive[k].value = kNegInf;
        // After the first step every beam of a sentence grows from its one row.
        source_rows.push_back(i == 0 ? r : r * K + cands[p].beam);
      }
      b.alive = std::move(alive);
      b.finished = std::move(finished);

      // T2T's _is_not_finished, per sentence. The best the best alive
      // hypothesis could still reach is its log-probability (which can only
      // fall) over the largest penalty, the one at the decode length. With
      // stop_early the sentence is settled once its best finished score
      // beats that (T2T's reduce_max); without, once every one of its K
      // finished slots holds a hypothesis and the lowest beats it
      // (reduce_min), so that no alive one can still enter them.
      bool all_flagged = true;
      for (const Beam& f : b.finished) all_flagged = all_flagged && f.flag;
      const float settled_score =
          options.stop_early ? (b.finished[0].flag ? b.finished[0].value : -inf)
                             : (all_flagged ? b.finished[K - 1].value : -inf);
      bool met = settled_score > b.alive[0].value / b.max_penalty;
      if (enough_ended > 0) {
        for (int64_t j = 0; j < K; ++j) b.ended += cands[j].id == kEosId;
        b.best_ended = b.best_ended || cands[0].id == kEosId;
        met = met || (b.best_ended && b.ended >= enough_ended);
      }
      const int64_t s = set.sentence[r];
      // With terms, most alive hypotheses lack some and may not end yet,
      // and the bound above would wait for them to the decode length: as
      // fairseq does, a constrained sentence looks at those that hold every
      // term only (none: it is settled once its finished slots are).
      if (!met && !guide_of(guides, s).constraints.empty()) {
        float best = -inf;
        for (const Beam& h : b.alive)
          if (h.constraints.all_met()) best = std::max(best, h.value);
        met = settled_score > best / b.max_penalty;
      }
      if (set.settled[s]) continue;  // kept in the batch (drop_finished off), its result given
      if (i + 1 >= set.decode_length[s] || met) {
        results[s] = collect(b, options.num_return, set.input_length[s],
                             guide_of(guides, s).constraints);
        set.settled[s] = 1;
      } else {
        open.push_back(r);
      }
    }
    if (open.empty()) break;
    if (options.drop_finished && static_cast<int64_t>(open.size()) < rows) {
      // The settled sentences leave the batch, and the state keeps the rows
      // of the others only: one reordering for both.
      std::vector<int64_t> kept_rows;
      std::vector<SentenceBeams> kept_beams;
      std::vector<int64_t> kept_sentences;
      for (int64_t r : open) {
        for (int64_t k = 0; k < K; ++k) kept_rows.push_back(source_rows[r * K + k]);
        kept_beams.push_back(std::move(beams[r]));
        kept_sentences.push_back(set.sentence[r]);
      }
      source_rows = std::move(kept_rows);
      beams = std::move(kept_beams);
      set.sentence = std::move(kept_sentences);
    }
    model.reorder_state(*state, rows_tensor(source_rows, device));
  }
  return results;
}

}  // namespace

double length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<std::vector<Hypothesis>> beam_search(T2TModel& model, const torch::Tensor& inputs,
                                                 const SearchOptions& options, SearchStats* stats,
                                                 const std::vector<int64_t>& sample_keys,
                                                 const std::vector<TargetGuide>& guides,
                                                 const OutputColumns& columns) {
  check_search_options(options);
  if (!sample_keys.empty() && static_cast<int64_t>(sample_keys.size()) != inputs.size(0))
    throw Error("beam_search: one sample key per input row is needed");
  if (!guides.empty() && static_cast<int64_t>(guides.size()) != inputs.size(0))
    throw Error("beam_search: one guide per input row is needed, or none");
  if (inputs.size(0) == 0) return {};
  if (options.alignment && !model.reports_attention())
    throw OptionError("alignment", "this model cannot report the attention that {alignment} "
                                   "reads");
  if (!guides.empty()) {
    const auto lengths = inputs.ne(kPadId).sum(1).to(torch::kCPU, torch::kLong).contiguous();
    for (size_t b = 0; b < guides.size(); ++b) {
      const int64_t n = options.batch_decode_length ? inputs.size(1) : lengths.data_ptr<int64_t>()[b];
      check_target_guide(guides[b], options, n, "sentence " + std::to_string(b + 1));
    }
  }
  torch::NoGradGuard no_grad;
  return options.beam_size == 1
             ? greedy(model, inputs, options, stats, sample_keys, guides, columns)
             : beam(model, inputs, options, stats, guides, columns);
}

}  // namespace t2t
