#!/usr/bin/env bash
# Installs what is missing, builds t2t (Release) into build/, and runs every
# test with CTest. Exits non-zero on any failure. Extra arguments go to ctest
# (e.g. ./tools/test.sh -R hparams).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
t2t_setup
say "running the tests"
cd "$T2T_BUILD_DIR"
ctest --output-on-failure --timeout 1500 -j "${T2T_TEST_JOBS:-2}" "$@"
