// t2t-datagen: downloads a problem's raw data, learns its vocabularies and
// writes its encoded TFRecord shards, with T2T's flags. --inspect=FILE looks
// into a shard instead.
#include <algorithm>
#include <iostream>

#include "t2t/core/logging.h"
#include "t2t/core/string_util.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/data/text_problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/text_encoder.h"
#include "tools/cli_common.h"

namespace {

void add_datagen_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Datagen")
      ("exclude_problems", "Comma-separated strings: problems whose name contains one of them "
       "are left out of what --problem selects (T2T's rule), e.g. "
       "--problem='translate_enzh*' --exclude_problems=wmt.", value<std::string>()->default_value(""))
      ("num_shards", "Refused, as T2T refuses it for registered problems: every problem has "
       "its own shard counts, which the trainer and decoder rely on to find the files "
       "(a YAML problem declares them under shards:).", value<int>()->default_value("0"))
      ("max_cases", "Write at most this many examples per split (the first ones of the "
       "problem's data, also the only ones the vocabulary is learned from); 0 = all.",
       value<int64_t>()->default_value("0"))
      ("max_line_bytes", "Drop (and count) pairs with a side longer than this many bytes; "
       "-1 = the problem's own limit, 0 = none.", value<int64_t>()->default_value("-1"))
      ("train_alignments", "A word-alignment file for guided-alignment training (the "
       "trainer's guided_alignment_weight hparam): one Pharaoh line ('0-0 1-2 2-1', source-"
       "target word indices, as eflomal and fast_align write them) per pair of the problem's "
       "raw training data, in order. Words are counted as t2t counts them: t2t.alignment_words() "
       "in Python splits a line so. Written into the training shards as the 'alignment' feature.",
       value<std::string>()->default_value(""))
      ("only_list", "List the problems --problem selects (every registered one without "
       "--problem) and exit.")
      ("inspect", "Print statistics and the first examples of this TFRecord file, decoded to "
       "text when --problem and --data_dir are given, then exit.",
       value<std::string>()->default_value(""))
      ("inspect_examples", "How many examples --inspect prints.",
       value<int>()->default_value("5"));
}

struct LengthStats {
  std::vector<int64_t> lengths;
  std::string describe() const {
    if (lengths.empty()) return "none";
    std::vector<int64_t> v = lengths;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (auto x : v) sum += x;
    char buf[160];
    std::snprintf(buf, sizeof buf, "min %lld, mean %.1f, median %lld, 95%% %lld, max %lld",
                  (long long)v.front(), sum / v.size(), (long long)v[v.size() / 2],
                  (long long)v[std::min(v.size() - 1, v.size() * 95 / 100)], (long long)v.back());
    return buf;
  }
};

std::string ids_text(const std::vector<int64_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s;
}

int inspect(const cxxopts::ParseResult& flags) {
  const std::string file = flags["inspect"].as<std::string>();
  t2t::FeatureEncoders enc;
  const std::string problem = flags["problem"].as<std::string>();
  const std::string data_dir = flags["data_dir"].as<std::string>();
  if (!problem.empty() && !data_dir.empty())
    enc = t2t::create_problem(problem)->feature_encoders(data_dir);
  t2t::TFRecordReader reader(file);
  std::map<std::string, LengthStats> stats;
  std::string record;
  int64_t count = 0;
  const int show = flags["inspect_examples"].as<int>();
  while (reader.next(&record)) {
    auto features = t2t::parse_example(record);
    for (const auto& [name, ids] : features) stats[name].lengths.push_back(ids.size());
    if (count < show) {
      std::cout << "example " << count << ":\n";
      for (const auto& [name, ids] : features) {
        std::cout << "  " << name << " ids: " << ids_text(ids) << "\n";
        auto& e = name == "inputs" ? enc.inputs : name == "targets" ? enc.targets : enc.inputs;
        if (e) std::cout << "  " << name << " text: " << e->decode(ids) << "\n";
      }
    }
    ++count;
  }
  std::cout << file << ": " << count << " examples\n";
  for (const auto& [name, s] : stats)
    std::cout << "  " << name << " length (ids, EOS included): " << s.describe() << "\n";
  return 0;
}

// The comma-separated, trimmed, non-empty parts of a flag's value.
std::vector<std::string> list_flag(const std::string& value) {
  std::vector<std::string> out;
  for (const auto& part : t2t::split(value, ','))
    if (!t2t::trim(part).empty()) out.push_back(t2t::trim(part));
  return out;
}

// Registered names that start almost like `prefix`, for a pattern that
// matches nothing.
std::vector<std::string> near_prefix(const std::string& prefix,
                                     const std::vector<std::string>& names) {
  std::vector<std::string> starts;
  for (const auto& n : names) starts.push_back(n.substr(0, prefix.size()));
  std::vector<std::string> out;
  for (const auto& close : t2t::close_matches(prefix, starts, 3))
    for (const auto& n : names)
      if (t2t::starts_with(n, close) && out.size() < 6 &&
          std::find(out.begin(), out.end(), n) == out.end())
        out.push_back(n);
  return out;
}

// The problems --problem names, as T2T's t2t-datagen selects them: one name,
// a comma-separated list, or a prefix ending in '*' (every registered
// problem that starts with it); then those whose name contains one of
// --exclude_problems are dropped. In name order. Unlike T2T, a name or
// pattern that selects nothing is an error rather than skipped.
std::vector<std::string> select_problems(const std::string& spec, const std::string& exclude) {
  auto& registry = t2t::problem_registry();
  std::vector<std::string> names = registry.names();
  std::sort(names.begin(), names.end());
  std::vector<std::string> selected;
  if (t2t::ends_with(spec, "*")) {
    const std::string prefix = spec.substr(0, spec.size() - 1);
    for (const auto& n : names)
      if (t2t::starts_with(n, prefix)) selected.push_back(n);
    if (selected.empty()) {
      const auto near = near_prefix(prefix, names);
      throw t2t::cli::UsageError(
          "--problem=" + spec + " matches no registered problem" +
          (near.empty() ? "" : "; near names: " + t2t::join(near, ", ")) +
          ". --registry_help lists them all.");
    }
  } else {
    for (const auto& n : list_flag(spec)) {
      if (!registry.contains(n) && t2t::ends_with(n, "_rev") &&
          registry.contains(n.substr(0, n.size() - 4)))
        throw t2t::cli::UsageError("--problem=" + n + ": generate data for " +
                                   n.substr(0, n.size() - 4) +
                                   "; the _rev variant reads the same files");
      if (!registry.contains(n)) throw t2t::cli::usage_error(registry.unknown(n));
      if (std::find(selected.begin(), selected.end(), n) == selected.end()) selected.push_back(n);
    }
    std::sort(selected.begin(), selected.end());
  }
  const auto excludes = list_flag(exclude);
  for (const auto& x : excludes) {
    if (std::none_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n.find(x) != std::string::npos; }))
      throw t2t::cli::UsageError("--exclude_problems: '" + x +
                                 "' is in no registered problem's name, so it excludes nothing");
  }
  std::vector<std::string> kept;
  for (const auto& n : selected)
    if (std::none_of(excludes.begin(), excludes.end(),
                     [&](const std::string& x) { return n.find(x) != std::string::npos; }))
      kept.push_back(n);
  if (kept.empty())
    throw t2t::cli::UsageError("--exclude_problems=" + exclude + " leaves none of --problem=" +
                               spec + " (" + t2t::join(selected, ", ") + ")");
  return kept;
}

// "translate_enzh_wmt32k (train 100, dev 1)": a problem's own shard counts.
std::string shard_counts(const std::string& name) {
  std::vector<std::string> parts;
  for (const auto& s : t2t::create_problem(name)->dataset_splits())
    parts.push_back(s.name + " " + std::to_string(s.shards));
  return name + " (" + t2t::join(parts, ", ") + ")";
}

int generate(const cxxopts::ParseResult& flags) {
  if (!flags["inspect"].as<std::string>().empty()) return inspect(flags);
  const std::string spec = flags["problem"].as<std::string>();
  if (flags.count("only_list")) {
    auto names = t2t::problem_registry().names();
    if (!spec.empty()) names = select_problems(spec, flags["exclude_problems"].as<std::string>());
    std::sort(names.begin(), names.end());
    for (const auto& name : names) std::cout << name << "\n";
    return 0;
  }
  t2t::cli::required(flags, "problem",
                     "--problem=translate_enzh_sample (or a list a,b, or a prefix 'translate_*')");
  const std::vector<std::string> problems =
      select_problems(spec, flags["exclude_problems"].as<std::string>());
  if (const int shards = flags["num_shards"].as<int>(); shards != 0) {
    std::vector<std::string> counts;
    for (const auto& n : problems) counts.push_back(shard_counts(n));
    throw t2t::cli::UsageError(
        "--num_shards=" + std::to_string(shards) + " is refused, as T2T refuses it for "
        "registered problems: the shard counts are the problem's own, and the trainer and "
        "decoder find the files by them: " + t2t::join(counts, "; ") +
        ". For other counts, declare a YAML problem with shards: {train: N, dev: M} and load it "
        "with --t2t_usr_dir.");
  }
  const int64_t max_cases = flags["max_cases"].as<int64_t>();
  if (max_cases < 0)
    throw t2t::cli::UsageError("--max_cases=" + std::to_string(max_cases) +
                               " must be 0 (all) or a positive count");
  const std::string data_dir = t2t::cli::required(flags, "data_dir", "--data_dir=t2t_data");
  const std::string tmp_dir = flags["tmp_dir"].as<std::string>();
  t2t::GenerateOptions options;
  options.threads = flags["threads"].as<int>();
  options.seed = flags["random_seed"].as<uint64_t>();
  options.max_cases = max_cases;
  options.max_line_bytes = flags["max_line_bytes"].as<int64_t>();
  options.train_alignments = flags["train_alignments"].as<std::string>();
  if (!options.train_alignments.empty() && problems.size() > 1)
    throw t2t::cli::UsageError("--train_alignments is line-parallel to one problem's training "
                               "data, but --problem selects " + std::to_string(problems.size()) +
                               " (" + t2t::join(problems, ", ") + "): generate that one alone");
  if (problems.size() > 1)
    spdlog::info("generating {} problems: {}", problems.size(), t2t::join(problems, ", "));
  const t2t::Stopwatch all;
  for (const auto& name : problems) {
    auto problem = t2t::create_problem(name);
    if (!options.train_alignments.empty() &&
        dynamic_cast<t2t::Text2TextProblem*>(problem.get()) == nullptr)
      throw t2t::cli::UsageError("--train_alignments needs a text-to-text problem; " + name +
                                 " is not one");
    const t2t::Stopwatch timer;
    spdlog::info("generating {} into {} (raw data in {})", name, data_dir, tmp_dir);
    problem->generate_data(data_dir, tmp_dir, options);
    spdlog::info("done in {:.1f} s", timer.seconds());
  }
  if (problems.size() > 1) spdlog::info("all {} problems done in {:.1f} s", problems.size(), all.seconds());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-datagen",
                           "Generates a problem's data, T2T style:\n"
                           "  t2t-datagen --problem=translate_enzh_wmt32k --data_dir=D --tmp_dir=T\n"
                           "--problem takes one name, a comma-separated list, or a prefix ending "
                           "in '*' ('translate_enzh*': every registered problem starting so, in "
                           "name order; --exclude_problems drops some).\n"
                           "Downloads what is missing into --tmp_dir (an archive already there is "
                           "used as is), learns the vocabularies and writes sharded TFRecord files "
                           "of tf.train.Example into --data_dir. Re-running skips what is done.\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  add_datagen_flags(options);
  return t2t::cli::run(argc, argv, options, generate);
}
