#!/usr/bin/env bash
# Datagen benchmark: a WMT-sized English-Chinese job (250k pairs of
# news-length sentences, synthetic) through t2t-datagen, vocabulary learning
# included, and the encode+write rate alone, with SentencePiece (the default)
# and with T2T's subword vocabularies. Prints the figures against the targets
# and, as the reference, T2T's own Python encoder on the same text and the
# same vocabulary files in the same run (t2t_reference.py).
#
#   bench/datagen/run.sh            # needs a built t2t (./tools/test.sh)
# Environment: PAIRS (250000), T2T_BUILD_DIR (build), WORK (/tmp/t2t_bench_datagen),
# T2T_CACHE (where the reference's virtualenv goes, as tools/setup.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${T2T_BUILD_DIR:-$ROOT/build}
WORK=${WORK:-/tmp/t2t_bench_datagen}
PAIRS=${PAIRS:-250000}
DATAGEN="$BUILD/t2t-datagen"
[ -x "$DATAGEN" ] || { echo "no $DATAGEN: build t2t first (./tools/test.sh)" >&2; exit 1; }

mkdir -p "$WORK/usr"
if [ "$(wc -l < "$WORK/corpus/train.en" 2>/dev/null || echo 0)" != "$PAIRS" ]; then
  echo "== writing a synthetic corpus of $PAIRS pairs"
  python3 "$ROOT/bench/datagen/make_corpus.py" --pairs "$PAIRS" --out "$WORK/corpus"
fi
cat > "$WORK/usr/bench.yaml" <<YAML
name: bench_enzh
source_language: en
target_language: zh
train: {source: ../corpus/train.en, target: ../corpus/train.zh}
dev: {source: ../corpus/dev.en, target: ../corpus/dev.zh}
vocab: {type: sentencepiece, size: 32768, separate: true}
shards: {train: 100, dev: 1}
YAML

run_datagen() {
  "$DATAGEN" --t2t_usr_dir="$WORK/usr/bench.yaml" --problem=bench_enzh --data_dir="$WORK/data" \
    --tmp_dir="$WORK/tmp" 2>&1 | tee "$WORK/last.log" | grep -E "vocabular|wrote|done in"
}
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.1f}')" "$1" "$2"; }

echo "== full job: vocabulary learning + encoding + writing 100 shards"
rm -rf "$WORK/data"
t0=$(date +%s.%N); run_datagen; t1=$(date +%s.%N)
full=$(seconds "$t0" "$t1")

echo "== encode+write only (vocabularies kept)"
rm -f "$WORK"/data/bench_enzh-*
run_datagen
rate=$(grep -oP "train: wrote \d+ examples .*\(\K[0-9]+(?= pairs/s)" "$WORK/last.log")

echo "== the same with T2T's subword vocabularies (learned here, T2T's algorithm)"
rm -rf "$WORK/data"
sed -i 's/type: sentencepiece/type: subword/' "$WORK/usr/bench.yaml"
t0=$(date +%s.%N); run_datagen; t1=$(date +%s.%N)
full_subword=$(seconds "$t0" "$t1")
rate_subword=$(grep -oP "train: wrote \d+ examples .*\(\K[0-9]+(?= pairs/s)" "$WORK/last.log")

echo
echo "RESULT full job, sentencepiece: ${full} s for $PAIRS pairs (target < 120 s)"
echo "RESULT encode+write, sentencepiece: ${rate} pairs/s on $(nproc) cores (target >= 30000)"
echo "RESULT full job, T2T subword: ${full_subword} s; encode+write ${rate_subword} pairs/s"
if python3 "$ROOT/bench/datagen/t2t_reference.py" --check; then
  python3 "$ROOT/bench/datagen/t2t_reference.py" --corpus "$WORK/corpus" \
    --vocab_dir "$WORK/data" --ours "$rate_subword"
else
  echo "REFERENCE skipped: T2T's text encoder could not be installed (see t2t_reference.py)"
fi
