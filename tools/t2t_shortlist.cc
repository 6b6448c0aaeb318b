// t2t-shortlist: builds a lexical shortlist from a problem's training shards
// (t2t/search/lexical_shortlist.h), or converts one between CTranslate2's
// vmap and Marian's text format; t2t-decoder, t2t-serve and the Python
// Translator then decode with it (--shortlist).
#include <filesystem>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "t2t/core/error.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/search/shortlist_builder.h"
#include "t2t/text/text_encoder.h"
#include "t2t/translate/shortlist_file.h"
#include "tools/cli_common.h"

namespace {

using cxxopts::value;
using t2t::cli::UsageError;

void add_shortlist_flags(cxxopts::Options& options) {
  options.add_options("Shortlist")
      ("output", "The shortlist file to write (written whole, then renamed into place). "
       "Beside the model, e.g. <output_dir>/shortlist.vmap, t2t-decoder --shortlist=shortlist.vmap "
       "finds it there.",
       value<std::string>()->default_value(""))
      ("format", "vmap: CTranslate2's vocabulary map (t2t's own; a CTranslate2 converter "
       "takes it as vocab_mapping); marian: Marian's text shortlist (\"target source "
       "probability\" lines; Marian's first N ids stand for the always-allowed targets).",
       value<std::string>()->default_value("vmap"))
      ("tokens", "How the file names tokens: vocabulary (the vocabularies' own strings: "
       "SentencePiece pieces, T2T subwords), ids (<id_N>, as tools/export_ctranslate2.py "
       "names them in the CTranslate2 models it writes), or auto: vocabulary unless a token "
       "to write holds whitespace (T2T subwords such as ', _' do), then ids.",
       value<std::string>()->default_value("auto"))
      ("input", "Convert this shortlist (a vmap or Marian's, told apart by its lines) instead "
       "of counting the training shards.",
       value<std::string>()->default_value(""))
      ("best", "Targets kept per source token, best first (by p(target | source)).",
       value<int64_t>()->default_value("50"))
      ("frequent", "Always-allowed targets: the most frequent target tokens. With --input of "
       "Marian's format: how many of the vocabulary's first ids (Marian's 'first', 100).",
       value<int64_t>()->default_value("100"))
      ("min_count", "A (source, target) pair seen fewer times is dropped.",
       value<int64_t>()->default_value("2"))
      ("max_pairs", "Count at most this many training pairs (0: all): a large corpus's first "
       "millions give the same lists.",
       value<int64_t>()->default_value("0"))
      ("threshold", "With --input of Marian's format: entries of lower probability are dropped.",
       value<double>()->default_value("0"));
}

// The ids a shortlist writes: [source ids, target ids].
std::pair<std::vector<int64_t>, std::vector<int64_t>> written_ids(const t2t::LexicalShortlist& s) {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> out;
  for (const auto& t : s.frequent()) out.second.push_back(t.id);
  for (const auto& [ngram, targets] : s.entries()) {
    out.first.insert(out.first.end(), ngram.begin(), ngram.end());
    for (const auto& t : *targets) out.second.push_back(t.id);
  }
  return out;
}

// The token naming --tokens asks for; with auto, the vocabularies' strings
// when every token written has a writable one.
std::pair<t2t::ShortlistTokens, t2t::ShortlistTokens> naming(const std::string& how,
                                                             const t2t::FeatureEncoders& encoders,
                                                             const t2t::LexicalShortlist& s) {
  auto ids = [&] {
    return std::make_pair(t2t::ShortlistTokens::ids(encoders.inputs->vocab_size()),
                          t2t::ShortlistTokens::ids(encoders.targets->vocab_size()));
  };
  if (how == "ids") return ids();
  if (how != "vocabulary" && how != "auto")
    throw UsageError("--tokens=" + how + ": use auto, vocabulary or ids");
  auto own = std::make_pair(t2t::vocabulary_tokens(*encoders.inputs),
                            t2t::vocabulary_tokens(*encoders.targets));
  if (how == "auto") {
    const auto [source, target] = written_ids(s);
    for (const auto& [list, names, side] :
         {std::tuple(&source, &own.first, "source"), std::tuple(&target, &own.second, "target")})
      for (int64_t id : *list)
        if (!names->writable(id)) {
          spdlog::info("tokens written as <id_N>: the {} vocabulary's token {} holds whitespace "
                       "(or is empty), which a shortlist file cannot hold",
                       side, id);
          return ids();
        }
  }
  return own;
}

int64_t positive(const cxxopts::ParseResult& flags, const std::string& name, int64_t least) {
  const auto v = flags[name].as<int64_t>();
  if (v < least)
    throw UsageError("--" + name + "=" + std::to_string(v) + ": give a count >= " +
                     std::to_string(least));
  return v;
}

// Counts the training shards of `problem` (its direction: a _rev problem's
// inputs are the data's targets).
t2t::LexicalShortlist count_shards(const t2t::Problem& problem, const std::string& data_dir,
                                   const t2t::FeatureEncoders& encoders,
                                   const t2t::ShortlistBuildOptions& build, int64_t max_pairs) {
  const auto paths = problem.training_filepaths(data_dir);
  std::vector<std::string> present;
  for (const auto& p : paths)
    if (std::filesystem::exists(p)) present.push_back(p);
  if (present.empty())
    throw t2t::Error("no training shards of " + problem.name() + " in " + data_dir + " (" +
                     paths.front() + ", ...); run " +
                     t2t::command_suggestion("t2t-datagen", {{"problem", problem.name()},
                                                             {"data_dir", data_dir},
                                                             {"tmp_dir", "..."}}) +
                     " first");
  t2t::ShortlistCounts counts(encoders.inputs->vocab_size(), encoders.targets->vocab_size());
  const t2t::Stopwatch clock;
  double last_report = 0;
  int64_t aligned = 0;
  for (const auto& path : present) {
    t2t::TFRecordReader reader(path);
    std::string record;
    while ((max_pairs == 0 || counts.pairs() < max_pairs) && reader.next(&record)) {
      t2t::Int64Features f;
      try {
        f = t2t::parse_example(record);
      } catch (const t2t::Error& e) {
        throw t2t::Error(path + " near byte " + std::to_string(reader.offset()) + ": " + e.what());
      }
      auto source = std::move(f["inputs"]);
      auto target = std::move(f["targets"]);
      const auto links = f.find("alignment");
      if (links != f.end() && !links->second.empty()) {
        std::vector<std::pair<int64_t, int64_t>> pairs;
        for (size_t k = 0; k + 1 < links->second.size(); k += 2)
          pairs.emplace_back(links->second[k], links->second[k + 1]);
        if (problem.reversed()) {
          std::swap(source, target);
          for (auto& [i, j] : pairs) std::swap(i, j);
        }
        counts.add_aligned(source, target, pairs);
        ++aligned;
      } else {
        if (problem.reversed()) std::swap(source, target);
        counts.add(source, target);
      }
      if (clock.seconds() - last_report >= 10) {
        last_report = clock.seconds();
        spdlog::info("counted {} pairs ({:.0f}/s)", counts.pairs(), counts.pairs() / last_report);
      }
    }
  }
  spdlog::info("counted {} training pairs ({} by their word alignments) in {:.1f} s",
               counts.pairs(), aligned, clock.seconds());
  return counts.build(build);
}

int make_shortlist(const cxxopts::ParseResult& flags) {
  const std::string problem_name = t2t::cli::required(flags, "problem", "--problem=translate_enzh_wmt32k");
  const std::string data_dir = t2t::cli::required(flags, "data_dir", "--data_dir=t2t_data");
  const std::string output = t2t::cli::required(flags, "output", "--output=t2t_train/run1/shortlist.vmap");
  const auto format = [&] {
    try {
      return t2t::parse_shortlist_format(flags["format"].as<std::string>(), "format");
    } catch (const t2t::OptionError& e) {
      throw UsageError(t2t::cli::flag_message(e));
    }
  }();
  const std::string input = flags["input"].as<std::string>();
  t2t::ShortlistBuildOptions build;
  build.best = positive(flags, "best", 1);
  build.frequent = positive(flags, "frequent", 0);
  build.min_count = positive(flags, "min_count", 1);
  const int64_t max_pairs = positive(flags, "max_pairs", 0);
  if (!input.empty() && (flags.count("min_count") || flags.count("max_pairs") || flags.count("best")))
    throw UsageError("--min_count, --max_pairs and --best shape a shortlist counted from the "
                     "shards; with --input the file's lists are converted as they are");
  if (input.empty() && flags.count("threshold"))
    throw UsageError("--threshold reads a Marian --input; counting the shards has no use for it");

  const auto problem = t2t::create_problem(problem_name);
  const t2t::FeatureEncoders encoders = problem->feature_encoders(data_dir);
  t2t::LexicalShortlist shortlist;
  if (input.empty()) {
    shortlist = count_shards(*problem, data_dir, encoders, build, max_pairs);
  } else {
    t2t::ShortlistOptions read;
    read.file = input;
    read.threshold = flags["threshold"].as<double>();
    read.limits.frequent = flags.count("frequent") ? build.frequent : -1;
    shortlist = *t2t::load_shortlist(read, "", *encoders.inputs, *encoders.targets);
  }
  const auto [source_tokens, target_tokens] =
      naming(flags["tokens"].as<std::string>(), encoders, shortlist);
  t2t::write_shortlist(shortlist, output, format, source_tokens, target_tokens);
  size_t entries = 0;
  for (const auto& [ngram, targets] : shortlist.entries()) entries += targets->size();
  spdlog::info("wrote {}: {} source n-grams, {} entries, {} targets always allowed", output,
               shortlist.size(), entries, shortlist.frequent().size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options(
      "t2t-shortlist",
      "Builds a lexical shortlist from a problem's training shards, or converts one:\n"
      "  t2t-shortlist --problem=translate_enzh_wmt32k --data_dir=t2t_data \\\n"
      "    --output=t2t_train/run1/shortlist.vmap --best=50 --frequent=100\n"
      "  t2t-decoder ... --shortlist=shortlist.vmap   # found beside the model\n"
      "  t2t-shortlist ... --input=shortlist.vmap --output=lex.s2t --format=marian\n"
      "  t2t-shortlist ... --input=shortlist.vmap --output=vmap.txt --tokens=ids   # for "
      "tools/export_ctranslate2.py's models\n"
      "Each source token's targets are those of highest p(target | source), counted over the "
      "pairs it occurs in, or over its word links where the shards hold alignments "
      "(t2t-datagen --train_alignments).\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  add_shortlist_flags(options);
  return t2t::cli::run(argc, argv, options, make_shortlist);
}
