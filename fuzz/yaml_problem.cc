// Problems declared in YAML (--t2t_usr_dir's .yaml files).
#include "fuzz/fuzz_target.h"
#include "t2t/core/error.h"
#include "t2t/data/yaml_problem.h"

T2T_FUZZ_TARGET(yaml_problem) {
  try {
    t2t::check_yaml_problem(t2t::fuzz::scratch_file("problem.yaml", data));
  } catch (const t2t::Error&) {
  }
}
