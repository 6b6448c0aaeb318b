#!/usr/bin/env bash
# Builds the fuzz harnesses (fuzz/, clang + libFuzzer + ASan/UBSan) and runs
# each for a while, then prints one line per harness: executions, executions
# per second, coverage, and the findings it left (crashes, leaks, timeouts,
# out-of-memory inputs) with their paths.
#
#   tools/fuzz.sh [--minutes=M] [--jobs=N] [--build-dir=DIR] [HARNESS ...]
#
# Defaults: 10 minutes each, as many at once as there are cores, every
# harness, build-fuzz/ as the build folder. The growing corpus lives in
# <build-dir>/corpus/<harness> (seeded from fuzz/corpus, kept between runs),
# findings in <build-dir>/findings/<harness>. A finding, once fixed, goes to
# fuzz/regressions/<harness>/ so that the ordinary test suite replays it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
minutes=10
jobs="$(nproc)"
build="$root/build-fuzz"
harnesses=()
for arg in "$@"; do
  case "$arg" in
    --minutes=*) minutes="${arg#*=}" ;;
    --jobs=*) jobs="${arg#*=}" ;;
    --build-dir=*) build="${arg#*=}" ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tools/fuzz.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) harnesses+=("$arg") ;;
  esac
done
if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "tools/fuzz.sh: --minutes=$minutes is not a number of minutes" >&2; exit 2
fi
command -v clang++ >/dev/null || { echo "tools/fuzz.sh needs clang++ (apt-get install clang)" >&2; exit 1; }

echo "building the harnesses in $build ..." >&2
# The harnesses of fuzz/torch/ need a Python with torch: the project's.
python="${T2T_PYTHON:-${T2T_CACHE:-$HOME/.cache/t2t}/venv/bin/python}"
cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DT2T_PYTHON="$python" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" >"$build/build.log" 2>&1 || { tail -40 "$build/build.log" >&2; exit 1; }

if [ ${#harnesses[@]} -eq 0 ]; then
  for f in "$root"/fuzz/*.cc; do
    name="$(basename "$f" .cc)"
    [ "$name" = fuzz_target ] || harnesses+=("$name")
  done
  for f in "$root"/fuzz/torch/*.cc; do
    name="$(basename "$f" .cc)"
    if [ -x "$build/fuzz_$name" ]; then harnesses+=("$name")
    else echo "tools/fuzz.sh: fuzz/torch/$name.cc not built (no torch in $python): skipped" >&2; fi
  done
fi
for name in "${harnesses[@]}"; do
  [ -x "$build/fuzz_$name" ] || { echo "tools/fuzz.sh: no harness '$name' (fuzz/$name.cc; those of fuzz/torch/ need T2T_PYTHON with torch)" >&2; exit 2; }
done

seconds="$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')"
run_one() {
  local name="$1"
  local corpus="$build/corpus/$name" findings="$build/findings/$name"
  mkdir -p "$corpus" "$findings"
  cp -n "$root/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true
  local dict=()
  [ -f "$root/fuzz/dict/$name.dict" ] && dict=(-dict="$root/fuzz/dict/$name.dict")
  # Bounded inputs, time and memory: a hang past 10 s or 2 GiB is a finding.
  local past=()
  [ -d "$root/fuzz/regressions/$name" ] && past=("$root/fuzz/regressions/$name")
  # The growing corpus first: libFuzzer adds what it finds to the first folder.
  LSAN_OPTIONS="suppressions=$root/tools/sanitizers/lsan_fuzz.supp:print_suppressions=0" \
  "$build/fuzz_$name" "$corpus" "${past[@]}" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$build/$name.log" 2>&1 || true
}
echo "fuzzing ${#harnesses[@]} harnesses, $minutes min each, $jobs at once ..." >&2
running=0
for name in "${harnesses[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

printf '%-20s %14s %10s %8s %8s  %s\n' harness executions exec/s cov features findings
status=0
for name in "${harnesses[@]}"; do
  log="$build/$name.log"
  execs="$(awk '/stat::number_of_executed_units:/ { v = $2 } END { print v }' "$log")"
  rate="$(awk '/stat::average_exec_per_sec:/ { v = $2 } END { print v }' "$log")"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')"
  ft="$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')"
  found="$(find "$build/findings/$name" -type f | wc -l)"
  printf '%-20s %14s %10s %8s %8s  %s\n' "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
    "$( [ "$found" -eq 0 ] && echo none || echo "$found in $build/findings/$name (log $log)")"
  [ "$found" -eq 0 ] || status=1
done
exit "$status"
