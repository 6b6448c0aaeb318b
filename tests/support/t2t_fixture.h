// The real T2T run the import tests read (tests/fixtures/t2t_run, made by
// tests/t2t_reference/make_fixtures.sh), and its problem declared for t2t.
#pragma once

#include <string>

#include "tests/support/test_util.h"

namespace t2t::test {

inline std::string t2t_fixture_dir() { return source_dir() + "/tests/fixtures/t2t_run"; }

// Writes <dir>/usr/fixture.yaml, T2T's usr problem of the fixture
// (tests/t2t_reference/usr) declared for t2t: the same name, two subword
// vocabularies named as T2T names them. Returns the flags that select it
// and the fixture's data: --t2t_usr_dir, --problem, --model, --data_dir.
inline std::string t2t_fixture_problem(const TempDir& dir,
                                       const std::string& model = "transformer") {
  const std::string sample = source_dir() + "/data/sample/";
  write_lines(dir / "usr/fixture.yaml",
              {"name: translate_enzh_fixture", "source_language: en", "target_language: zh",
               "train: {source: " + sample + "train.en, target: " + sample + "train.zh}",
               "dev: {source: " + sample + "dev.en, target: " + sample + "dev.zh}",
               "vocab: {type: subword, size: 256, separate: true}"});
  return "--t2t_usr_dir=" + (dir / "usr") +
         " --problem=translate_enzh_fixture --model=" + model + " --data_dir=" + t2t_fixture_dir() +
         "/data";
}

// The second T2T run (tests/fixtures/t2t_run_shared, made by
// tests/t2t_reference/make_shared_fixture.sh): one vocabulary shared by both
// languages and post-norm transformer_base_v1 with one shared embedding.
inline std::string t2t_shared_fixture_dir() { return source_dir() + "/tests/fixtures/t2t_run_shared"; }

// As t2t_fixture_problem, for translate_enzh_shared_fixture: one subword
// vocabulary of ~512 for both languages.
inline std::string t2t_shared_fixture_problem(const TempDir& dir) {
  const std::string sample = source_dir() + "/data/sample/";
  write_lines(dir / "usr_shared/fixture.yaml",
              {"name: translate_enzh_shared_fixture", "source_language: en",
               "target_language: zh",
               "train: {source: " + sample + "train.en, target: " + sample + "train.zh}",
               "dev: {source: " + sample + "dev.en, target: " + sample + "dev.zh}",
               "vocab: {type: subword, size: 512, separate: false}"});
  return "--t2t_usr_dir=" + (dir / "usr_shared") +
         " --problem=translate_enzh_shared_fixture --model=transformer --data_dir=" +
         t2t_shared_fixture_dir() + "/data";
}

}  // namespace t2t::test
