// The Problem registry: a Problem names a dataset, how to fetch and encode
// it, and where its encoded files live. Concrete problems live in problems/
// and register themselves with T2T_REGISTER_PROBLEM(ClassName), which keys
// them by T2T's snake_case rule (TranslateEnzhWmt32k -> translate_enzh_wmt32k).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "t2t/core/registry.h"

namespace t2t {

class Problem {
 public:
  virtual ~Problem() = default;

  // The registered name, without the "_rev" suffix.
  const std::string& name() const { return name_; }
  // True when the problem was asked for as "<name>_rev": inputs and targets
  // swap places, reading the very same files.
  bool reversed() const { return reversed_; }

  // One line for --registry_help.
  virtual std::string description() const = 0;

 private:
  friend std::unique_ptr<Problem> create_problem(const std::string& name);
  std::string name_;
  bool reversed_ = false;
};

using ProblemFactory = std::function<std::unique_ptr<Problem>()>;
Registry<ProblemFactory>& problem_registry();

// Looks `name` up, accepting T2T's "_rev" suffix on any registered problem.
// Throws t2t::Error with suggestions when unknown.
std::unique_ptr<Problem> create_problem(const std::string& name);

}  // namespace t2t

#define T2T_REGISTER_PROBLEM(Class)                                                 \
  static ::t2t::Registrar<::t2t::ProblemFactory> T2T_CONCAT(t2t_problem_registrar_, \
                                                            Class)(                 \
      ::t2t::problem_registry(), ::t2t::camelcase_to_snakecase(#Class),             \
      [] { return std::unique_ptr<::t2t::Problem>(new Class()); }, {#Class, __FILE__})
