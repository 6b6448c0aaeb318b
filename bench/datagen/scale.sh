#!/usr/bin/env bash
# Datagen at the full WMT English-Chinese size: t2t-datagen on a synthetic
# corpus of 25M pairs of news-length sentences (make_corpus.cc; ~9.5 GB of
# text, written in about two minutes) as a YAML problem with News
# Commentary's settings: two 32k SentencePiece vocabularies (one per
# language, learned on a 100k-sentence sample each), 100 train shards, 1 dev.
# Each size in SIZES runs once; the table gives the whole job's wall time,
# its rate, the peak resident memory (/usr/bin/time -v), the time of each
# phase (from the log) and the disk the data directory took at its peak
# against datagen's own estimate. A cost linear in the corpus shows as the
# same rate at every size, and flat memory as the same peak.
#
#   bench/datagen/scale.sh                      # SIZES="250000 25000000"
#   SIZES="250000 2500000" bench/datagen/scale.sh
# Environment: SIZES, T2T_BUILD_DIR (build), WORK (/tmp/t2t_bench_scale; needs
# ~2.5x the corpus free: text + temporary + final shards), KEEP=1 keeps the
# corpora and data (they are deleted after each size otherwise), THREADS (0).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${T2T_BUILD_DIR:-$ROOT/build}
WORK=${WORK:-/tmp/t2t_bench_scale}
SIZES=${SIZES:-250000 25000000}
THREADS=${THREADS:-0}
DATAGEN="$BUILD/t2t-datagen"
[ -x "$DATAGEN" ] || { echo "no $DATAGEN: build t2t first (./tools/test.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }

mkdir -p "$WORK"
g++ -O2 -std=c++17 -I "$ROOT" -o "$WORK/make_corpus" "$ROOT/bench/datagen/make_corpus.cc"

# Largest size in bytes of `dir` seen while the process `pid` runs.
watch_disk() {
  local dir=$1 pid=$2 peak=0 now
  while kill -0 "$pid" 2>/dev/null; do
    # du fails when a temporary file vanishes under it: keep what it counted.
    now=$( (du -sb "$dir" 2>/dev/null || true) | cut -f1 | head -n 1)
    [ "${now:-0}" -gt "$peak" ] && peak=$now
    sleep 2
  done
  echo "$peak"
}

phase() {  # seconds between the first log line matching $2 and the one matching $3, in log $1
  python3 - "$@" <<'PY'
import re, sys, datetime
log, start, end = sys.argv[1], sys.argv[2], sys.argv[3]
def stamp(pat):
    for line in open(log, encoding="utf-8", errors="replace"):
        if re.search(pat, line):
            m = re.match(r"\[(\d+-\d+-\d+ \d+:\d+:\d+\.\d+)\]", line)
            if m: return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f")
t0, t1 = stamp(start), stamp(end)
print(f"{(t1 - t0).total_seconds():.1f}" if t0 and t1 else "?")
PY
}

rows=()
for pairs in $SIZES; do
  corpus="$WORK/corpus_$pairs" data="$WORK/data_$pairs" log="$WORK/datagen_$pairs.log"
  if [ "$( { wc -l < "$corpus/train.en"; } 2>/dev/null || echo 0)" != "$pairs" ]; then
    echo "== writing a synthetic corpus of $pairs pairs into $corpus"
    mkdir -p "$corpus"
    t0=$(date +%s.%N)
    "$WORK/make_corpus" --pairs "$pairs" --out "$corpus"
    echo "   $(du -sh "$corpus" | cut -f1) in $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$(date +%s.%N)") s"
  fi
  mkdir -p "$WORK/usr_$pairs"
  cat > "$WORK/usr_$pairs/bench_scale.yaml" <<YAML
name: bench_scale
source_language: en
target_language: zh
train: {source: $corpus/train.en, target: $corpus/train.zh}
dev: {source: $corpus/dev.en, target: $corpus/dev.zh}
vocab: {type: sentencepiece, size: 32768, separate: true}
shards: {train: 100, dev: 1}
YAML
  rm -rf "$data"
  echo "== t2t-datagen on $pairs pairs"
  sync
  /usr/bin/time -v -o "$WORK/time_$pairs.txt" "$DATAGEN" --t2t_usr_dir="$WORK/usr_$pairs" \
    --problem=bench_scale --data_dir="$data" --tmp_dir="$WORK/tmp" --threads="$THREADS" \
    > "$log" 2>&1 &
  pid=$!
  peak_disk=$(watch_disk "$data" "$pid")
  wait "$pid" || { tail -20 "$log"; echo "t2t-datagen failed (log: $log)" >&2; exit 1; }
  grep -E "disk|vocabular|wrote|done in" "$log" | sed 's/^/   /'
  wall=$(python3 - "$WORK/time_$pairs.txt" <<'PY'
import sys
for line in open(sys.argv[1]):
    if "Elapsed (wall clock)" in line:
        parts = [float(x) for x in line.rsplit(" ", 1)[1].split(":")]
        s = 0
        for p in parts: s = s * 60 + p
        print(f"{s:.1f}")
PY
)
  rss_kb=$(grep "Maximum resident set size" "$WORK/time_$pairs.txt" | awk '{print $NF}')
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.0f", s}' "$WORK/time_$pairs.txt")
  vocab_pass=$(phase "$log" "generating bench_scale" "learning sentencepiece")
  learn=$(phase "$log" "learning sentencepiece" "vocabularies written")
  train=$(phase "$log" "vocabularies written" "bench_scale train: wrote")
  estimate=$(grep -oP "shards need about \K[0-9.]+ [KMGT]?i?B" "$log" | head -1 || true)
  final=$(du -sb "$data" | cut -f1)
  rows+=("$(printf "| %'d | %s | %'.0f | %s | %.0f MiB | %s | %s | %s | %.2f GiB (final %.2f GiB; estimate %s) |" \
    "$pairs" "$wall" "$(python3 -c "print($pairs / $wall)")" "$cpu" "$((rss_kb / 1024))" \
    "$vocab_pass" "$learn" "$train" \
    "$(python3 -c "print($peak_disk / 2**30)")" "$(python3 -c "print($final / 2**30)")" "${estimate:-?}")")
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$corpus" "$data"; fi
done

echo
echo "t2t-datagen, 2 x 32k SentencePiece, 100 train shards, $(nproc) cores, threads=$THREADS"
echo "| pairs | wall s | pairs/s (whole job) | CPU s | peak RSS | read + sample s | learn vocab s | encode + shard + shuffle s | data_dir at its peak |"
echo "|---|---|---|---|---|---|---|---|---|"
printf "%s\n" "${rows[@]}"
