#include "t2t/decode/decoder.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <numeric>

#include "models/model_registry.h"
#include "models/t2t_model.h"
#include "t2t/checkpoint/checkpoint.h"
#include "t2t/core/error.h"
#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/decode/parallel_batches.h"
#include "t2t/text/text_encoder.h"
#include "t2t/text/tokenizer.h"

namespace t2t {

namespace fs = std::filesystem;

DecodeOptions decode_options(const HParams& dp, const HParams& hp) {
  // Keys T2T has whose effect this decoder does not implement: refuse a
  // changed value rather than ignore it.
  if (dp.get_float("eos_penalty") != 0.0)
    throw Error("--decode_hparams eos_penalty is not supported by t2t-decoder; leave it at 0");
  if (dp.get_float("min_length_ratio") != 0.0)
    throw Error("--decode_hparams min_length_ratio is not supported by t2t-decoder; leave it at 0");
  if (dp.get_bool("skip_eos_postprocess"))
    throw Error("--decode_hparams skip_eos_postprocess is not supported by t2t-decoder; outputs "
                "always stop at EOS");

  DecodeOptions o;
  o.search.beam_size = dp.get_int("beam_size");
  o.search.alpha = dp.get_float("alpha");
  o.search.extra_length = dp.get_int("extra_length");
  if (o.search.beam_size < 1)
    throw Error("--decode_hparams beam_size must be at least 1, got " +
                std::to_string(o.search.beam_size));
  if (o.search.extra_length < 0)
    throw Error("--decode_hparams extra_length must be >= 0, got " +
                std::to_string(o.search.extra_length));
  o.return_beams = dp.get_bool("return_beams");
  o.write_beam_scores = dp.get_bool("write_beam_scores");
  if (o.write_beam_scores && !o.return_beams)
    spdlog::warn("--decode_hparams write_beam_scores only applies with return_beams=true (as in "
                 "T2T); no scores will be written");
  // As T2T: all beams are wanted, so the search may not stop once the best
  // one is settled.
  o.search.num_return = o.return_beams ? o.search.beam_size : 1;
  o.search.stop_early = !o.return_beams;

  const int64_t batch = dp.get_int("batch_size");
  if (batch < 0) throw Error("--decode_hparams batch_size must be >= 0 (0: 32), got " +
                             std::to_string(batch));
  o.batch_size = batch == 0 ? 32 : batch;

  int64_t limit = dp.get_int("max_input_size");
  if (limit <= 0) {
    // What the model was trained on; T2T's rule makes max_length 0 mean
    // the (token) batch size.
    limit = hp.has("max_length") ? hp.get_int("max_length") : 0;
    if (limit == 0 && hp.has("batch_size")) limit = hp.get_int("batch_size");
    if (hp.has("max_input_seq_length") && hp.get_int("max_input_seq_length") > 0)
      limit = limit > 0 ? std::min(limit, hp.get_int("max_input_seq_length"))
                        : hp.get_int("max_input_seq_length");
  }
  o.max_input_length = std::max<int64_t>(0, limit);
  if (o.max_input_length == 1)
    throw Error("an input limit of 1 token leaves room for EOS only; raise --decode_hparams "
                "max_input_size");
  o.delimiter = dp.get_string("delimiter");
  if (o.delimiter.empty()) throw Error("--decode_hparams delimiter must not be empty");
  o.num_samples = dp.get_int("num_samples");
  o.log_results = dp.get_bool("log_results");
  return o;
}

Decoder::Decoder(std::shared_ptr<T2TModel> model, std::shared_ptr<TextEncoder> input_encoder,
                 std::shared_ptr<TextEncoder> target_encoder, DecodeOptions options,
                 torch::Device device)
    : model_(std::move(model)),
      input_encoder_(std::move(input_encoder)),
      target_encoder_(std::move(target_encoder)),
      options_(std::move(options)),
      device_(device) {
  model_->eval();
}

std::vector<int64_t> Decoder::encode_source(const std::string& line, const std::string& where) {
  std::string text = line;
  if (!is_valid_utf8(text)) {
    ++counts_.invalid_utf8;
    text = utf8_replace_invalid(text);
  }
  text = u32_to_utf8(python_strip(utf8_to_u32(text)));
  if (text.empty()) return {};
  std::vector<int64_t> ids = input_encoder_->encode(text);
  ids.push_back(kEosId);
  return fit_source(std::move(ids), where);
}

std::vector<int64_t> Decoder::fit_source(std::vector<int64_t> ids, const std::string& where) {
  if (ids.empty() || ids.back() != kEosId) ids.push_back(kEosId);
  const int64_t limit = options_.max_input_length;
  if (limit > 0 && static_cast<int64_t>(ids.size()) > limit) {
    ++counts_.truncated;
    spdlog::warn("{}: {} tokens, more than the model's limit of {} (EOS included); decoding the "
                 "first {} only",
                 where, ids.size(), limit, limit - 1);
    ids.resize(limit - 1);
    ids.push_back(kEosId);
  }
  return ids;
}

std::vector<Translation> Decoder::translate(const std::vector<std::vector<int64_t>>& sources) {
  const int64_t n = static_cast<int64_t>(sources.size());
  std::vector<Translation> out(n);
  // Longest first, as T2T (a batch that does not fit shows up at once);
  // neighbours of similar length waste little on padding. Stable, so equal
  // lengths keep their order.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    const auto& s = sources[i];
    if (s.empty() || (s.size() == 1 && s[0] == kEosId)) {
      out[i].texts = {""};
      out[i].scores = {0.0};
      ++counts_.empty;
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return sources[a].size() > sources[b].size();
  });
  counts_.sentences += n;

  const Stopwatch clock;
  const int64_t tokens_before = counts_.output_tokens;
  double last_report = 0.0;
  int64_t done = n - static_cast<int64_t>(order.size());
  const int64_t batch_size = options_.batch_size;
  const int64_t batches = (static_cast<int64_t>(order.size()) + batch_size - 1) / batch_size;
  const int threads = at::get_num_threads();
  const int workers =
      device_.is_cpu() ? parallel_batches(options_.parallel_batches, threads, batches) : 1;
  std::mutex mutex;  // counts_, logging and progress; each batch fills its own rows of `out`
  for_each_batch(batches, workers, threads, [&](int64_t j) {
    const size_t start = static_cast<size_t>(j * batch_size);
    const size_t end = std::min(order.size(), start + static_cast<size_t>(batch_size));
    const int64_t rows = static_cast<int64_t>(end - start);
    const int64_t width = static_cast<int64_t>(sources[order[start]].size());
    auto batch = torch::zeros({rows, width}, torch::kLong);
    auto acc = batch.accessor<int64_t, 2>();
    int64_t input_tokens = 0, output_tokens = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const auto& ids = sources[order[start + r]];
      for (size_t t = 0; t < ids.size(); ++t) acc[r][t] = ids[t];
      input_tokens += static_cast<int64_t>(ids.size());
    }
    SearchStats stats;
    auto results = beam_search(*model_, batch.to(device_), options_.search, &stats);
    for (int64_t r = 0; r < rows; ++r) {
      Translation& t = out[order[start + r]];
      for (const auto& h : results[r]) {
        t.texts.push_back(target_encoder_->decode(h.ids));
        t.scores.push_back(h.score);
      }
      if (!results[r].empty())
        output_tokens +=
            static_cast<int64_t>(results[r][0].ids.size()) + (results[r][0].finished ? 1 : 0);
    }
    std::lock_guard<std::mutex> lock(mutex);
    counts_.input_tokens += input_tokens;
    counts_.output_tokens += output_tokens;
    counts_.search_row_steps += stats.row_steps;
    if (options_.log_results) {
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t index = order[start + r];
        spdlog::info("Inference results INPUT: {}", input_encoder_->decode(sources[index]));
        spdlog::info("Inference results OUTPUT: {}", out[index].texts.empty() ? "" : out[index].texts[0]);
      }
    }
    done += rows;
    const double now = clock.seconds();
    if (now - last_report >= options_.progress_seconds && done < n) {
      last_report = now;
      spdlog::info("decoded {}/{} sentences: {:.2f} sentences/s, {:.1f} output tokens/s", done, n,
                   done / now, (counts_.output_tokens - tokens_before) / now);
    }
  });
  return out;
}

std::string Decoder::format(const Translation& translation) const {
  auto clean = [](std::string s) {
    for (char& c : s)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
  };
  if (!options_.return_beams) return translation.texts.empty() ? "" : clean(translation.texts[0]);
  std::string line;
  for (size_t k = 0; k < translation.texts.size(); ++k) {
    if (k > 0) line += '\t';
    line += clean(translation.texts[k]);
    if (options_.write_beam_scores) line += fmt::format("\t{:.2f}", translation.scores[k]);
  }
  return line;
}

LoadedModel load_for_decoding(const Problem& problem, const std::string& model_name,
                              const HParams& hparams, const std::string& data_dir,
                              const std::string& output_dir, const std::string& checkpoint_path,
                              const torch::Device& device) {
  LoadedModel loaded;
  if (!checkpoint_path.empty()) {
    if (!fs::exists(checkpoint_path))
      throw Error("--checkpoint_path=" + checkpoint_path + " does not exist; give a model.ckpt-N.pt "
                  "file or a run directory");
    loaded.checkpoint = fs::is_directory(checkpoint_path) ? latest_checkpoint(checkpoint_path)
                                                          : checkpoint_path;
    if (loaded.checkpoint.empty())
      throw Error("--checkpoint_path=" + checkpoint_path + " holds no checkpoint (model.ckpt-N.pt)");
  } else {
    loaded.checkpoint = latest_checkpoint(output_dir);
    if (loaded.checkpoint.empty())
      throw Error("--output_dir=" + output_dir + " holds no checkpoint (model.ckpt-N.pt): train "
                  "there first with t2t-trainer, or name one with --checkpoint_path");
  }

  loaded.encoders = problem.feature_encoders(data_dir);
  FeatureInfo info{loaded.encoders.inputs->vocab_size(), loaded.encoders.targets->vocab_size(),
                   loaded.encoders.shared};
  loaded.model = model_registry().get(model_name)(hparams, info);
  try {
    loaded.step = load_checkpoint(loaded.checkpoint, *loaded.model, nullptr, false).step;
  } catch (const Error& e) {
    throw Error("checkpoint " + loaded.checkpoint + " does not fit model '" + model_name +
                "' as built from the run's hparams.yaml, --hparams and the vocabularies in " +
                data_dir + ": " + e.what());
  }
  loaded.model->to(device);
  loaded.model->eval();
  return loaded;
}

}  // namespace t2t
