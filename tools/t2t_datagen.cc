// t2t-datagen: downloads a problem's raw data, learns its vocabularies and
// writes its encoded TFRecord shards, T2T's flags.
#include <iostream>

#include "t2t/core/logging.h"
#include "t2t/data/problem.h"
#include "tools/cli_common.h"

namespace {

void add_datagen_flags(cxxopts::Options& options) {
  using cxxopts::value;
  options.add_options("Datagen")
      ("max_cases", "Write at most this many examples per split; 0 = all.",
       value<int64_t>()->default_value("0"))
      ("only_list", "List the registered problems and exit.");
}

int generate(const cxxopts::ParseResult& flags) {
  if (flags.count("only_list")) {
    for (const auto& name : t2t::problem_registry().names()) std::cout << name << "\n";
    return 0;
  }
  const std::string name =
      t2t::cli::required(flags, "problem", "--problem=translate_enzh_sample");
  if (t2t::ends_with(name, "_rev"))
    throw t2t::cli::UsageError("--problem=" + name + ": generate data for " +
                               name.substr(0, name.size() - 4) +
                               "; the _rev variant reads the same files");
  t2t::cli::required(flags, "data_dir", "--data_dir=t2t_data");
  auto problem = t2t::create_problem(name);
  throw t2t::Error("this build of t2t has no data generation yet (t2t/data)");
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("t2t-datagen",
                           "Generates a problem's data, T2T style:\n"
                           "  t2t-datagen --problem=translate_enzh_wmt32k --data_dir=D --tmp_dir=T\n");
  t2t::cli::add_common_flags(options);
  t2t::cli::add_problem_flags(options);
  add_datagen_flags(options);
  return t2t::cli::run(argc, argv, options, generate);
}
