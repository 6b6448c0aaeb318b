#!/usr/bin/env bash
# Builds t2t with sanitizers in a build folder of its own and runs the test
# suite there:
#
#   tools/sanitize.sh [address|thread] [CTEST ARGS ...]
#
# address (default): AddressSanitizer + UndefinedBehaviorSanitizer, the whole
# suite, in build-asan/. thread: ThreadSanitizer in build-tsan/, by default
# the tests of the threaded parts (the server, the batch queue, the
# prefetching reader, the distributed code; `-R REGEX` picks others).
# LibTorch and the Debian libraries are not instrumented: their own code goes
# unchecked (see tools/sanitizers/ for the suppressions of what they are
# known to do). The Python module is not built.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
kind="${1:-address}"
[ $# -gt 0 ] && shift
case "$kind" in
  address) build="$root/build-asan"; sanitize="address,undefined" ;;
  thread) build="$root/build-tsan"; sanitize="thread" ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "tools/sanitize.sh: '$kind' is not address or thread (see --help)" >&2; exit 2 ;;
esac

cache="${T2T_CACHE:-$HOME/.cache/t2t}"
python="${T2T_PYTHON:-$cache/venv/bin/python}"
launcher=()
if command -v ccache >/dev/null; then
  # As tools/setup.sh: a rebuild after a change compiles only what changed.
  export CCACHE_DIR="${CCACHE_DIR:-$cache/ccache}" CCACHE_BASEDIR="$root"
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
echo "configuring $build (T2T_SANITIZE=$sanitize) ..." >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DT2T_SANITIZE="$sanitize" -DT2T_PYTHON="$python" >"$build.configure.log" 2>&1 ||
  { tail -30 "$build.configure.log" >&2; exit 1; }
echo "building (long: every file instrumented) ..." >&2
cmake --build "$build" >"$build/build.log" 2>&1 || { tail -40 "$build/build.log" >&2; exit 1; }

supp="$root/tools/sanitizers"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# history_size: the longest access history, so that the other side of a
# report keeps its stack (and OpenMP's frames, which tsan.supp drops).
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$supp/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

args=("$@")
if [ "$kind" = thread ] && [ ${#args[@]} -eq 0 ]; then
  # The tests' names (ctest takes Catch's): the server, the batch queue,
  # batches side by side, the readers, the workers and launchers, signals.
  args=(-R "serve|queue|batch is due|lone sentence|sentences arriving|arrivals pause|oldest \
sentence|share a batch|empty sources|answered only when|cancelling|side by side|for_each_batch|\
several threads|prefetch|reader|worker|distributed|torchrun|gloo|concurrent|threads|SIGTERM|SIGINT")
fi
cd "$build"
# Instrumented code runs several times slower: a longer limit per test.
ctest -j"$(nproc)" --timeout 3600 --output-on-failure "${args[@]}"
