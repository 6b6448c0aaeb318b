#include "t2t/data/problem.h"

namespace t2t {

Registry<ProblemFactory>& problem_registry() {
  static Registry<ProblemFactory> registry("problem");
  return registry;
}

std::unique_ptr<Problem> create_problem(const std::string& name) {
  auto& registry = problem_registry();
  std::string base = name;
  bool reversed = false;
  if (!registry.contains(name) && ends_with(name, "_rev")) {
    base = name.substr(0, name.size() - 4);
    reversed = true;
  }
  if (!registry.contains(base)) throw Error(registry.unknown_message(name));
  std::unique_ptr<Problem> problem = registry.get(base)();
  problem->name_ = base;
  problem->reversed_ = reversed;
  return problem;
}

}  // namespace t2t
