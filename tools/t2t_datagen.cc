// t2t-datagen: downloads a problem's raw data, learns its vocabularies and
// writes its encoded TFRecord shards, with T2T's flags. --inspect=FILE looks
// into a shard instead.
#include <algorithm>
#include <iostream>

#include "t2t/core/logging.h"
#include "t2t/core/stopwatch.h"
#include "t2t/data/problem.h"
#include "t2t/io/example.h"
#include "t2t/io/tfrecord.h"
#include "t2t/text/text_encoder.h"
#include "tools/cli_common.h"

namespace {

void add_datagen_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Datagen")
      ("max_cases", "Write at most this many examples per split; 0 = all.",
       value<int64_t>()->default_value("0"))
      ("max_line_bytes", "Drop (and count) pairs with a side longer than this many bytes; "
       "-1 = the problem's own limit, 0 = none.", value<int64_t>()->default_value("-1"))
      ("only_list", "List the registered problems and exit.")
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

int generate(const cxxopts::ParseResult& flags) {
  if (flags.count("only_list")) {
    for (const auto& name : t2t::problem_registry().names()) std::cout << name << "\n";
    return 0;
  }
  if (!flags["inspect"].as<std::string>().empty()) return inspect(flags);
  const std::string name =
      t2t::cli::required(flags, "problem", "--problem=translate_enzh_sample");
  if (t2t::ends_with(name, "_rev"))
    throw t2t::cli::UsageError("--problem=" + name + ": generate data for " +
                               name.substr(0, name.size() - 4) +
                               "; the _rev variant reads the same files");
  const std::string data_dir = t2t::cli::required(flags, "data_dir", "--data_dir=t2t_data");
  const std::string tmp_dir = flags["tmp_dir"].as<std::string>();
  auto problem = t2t::create_problem(name);
  t2t::GenerateOptions options;
  options.threads = flags["threads"].as<int>();
  options.seed = flags["random_seed"].as<uint64_t>();
  options.max_cases = flags["max_cases"].as<int64_t>();
  options.max_line_bytes = flags["max_line_bytes"].as<int64_t>();
  const t2t::Stopwatch timer;
  spdlog::info("generating {} into {} (raw data in {})", name, data_dir, tmp_dir);
  problem->generate_data(data_dir, tmp_dir, options);
  spdlog::info("done in {:.1f} s", timer.seconds());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-datagen",
                           "Generates a problem's data, T2T style:\n"
                           "  t2t-datagen --problem=translate_enzh_wmt32k --data_dir=D --tmp_dir=T\n"
                           "Downloads what is missing into --tmp_dir (an archive already there is "
                           "used as is), learns the vocabularies and writes sharded TFRecord files "
                           "of tf.train.Example into --data_dir. Re-running skips what is done.\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  add_datagen_flags(options);
  return t2t::cli::run(argc, argv, options, generate);
}
