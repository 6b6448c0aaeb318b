#!/usr/bin/env bash
# The Python package against the t2t-decoder binary and CTranslate2, decoding
# the same file with the same weights, threads, beam and batch: each side in
# a process of its own, RUNS times, alternating (bench_translator.py).
#   Python:      t2t.Translator.translate(lines), first call (cold) and second
#   t2t-decoder: the binary on the file (its decoding time, from its log)
#   CTranslate2: translate_batch on the model exported by tools/export_ctranslate2.py,
#                doing T2T's search, at inter x intra threads 2x1 and 1x2
# Target: the Python layer costs at most 5% over t2t-decoder.
#
#   RUN_DIR=... DATA_DIR=... bench/python/run.sh
# Environment: RUN_DIR and DATA_DIR (a trained translate_enzh_tatoeba run;
# default: trains transformer_tiny for TRAIN_STEPS=3000 on TATOEBA_DIR), PROBLEM,
# SOURCE (TATOEBA_DIR/dev.en), THREADS (2), BEAM (4), BATCH (32), RUNS (3),
# WORK (/tmp/t2t_bench_python).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
TATOEBA_DIR=${TATOEBA_DIR:-$ROOT/../shared/data/tatoeba-enzh}
PROBLEM=${PROBLEM:-translate_enzh_tatoeba}
SOURCE=${SOURCE:-$TATOEBA_DIR/dev.en}
WORK=${WORK:-/tmp/t2t_bench_python}
RUNS=${RUNS:-3}
[ -f "$SOURCE" ] || { echo "no $SOURCE: set SOURCE, or TATOEBA_DIR" >&2; exit 1; }
bench_require "$BUILD/t2t-decoder"
[ -d "$BUILD/python/t2t" ] || { echo "no $BUILD/python/t2t: build t2t with its Python module" >&2; exit 1; }
"$PYTHON" -c 'import ctranslate2' 2>/dev/null \
  || { echo "no ctranslate2 in $PYTHON: run tools/setup.sh (or pip install ctranslate2)" >&2; exit 1; }
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH="$BUILD/python"
mkdir -p "$WORK"
if [ -z "${RUN_DIR:-}" ]; then
  DATA_DIR=$WORK/data RUN_DIR=$WORK/run
  bench_train_tiny "$PROBLEM" "$TATOEBA_DIR" "${TRAIN_STEPS:-3000}" "$DATA_DIR" "$RUN_DIR" "$WORK"
fi
rm -rf "$WORK/ct2"
"$PYTHON" "$ROOT/tools/export_ctranslate2.py" --output_dir="$RUN_DIR" --ctranslate2_dir="$WORK/ct2" \
  --quantization=float32 >/dev/null
COMMON=(--run_dir="$RUN_DIR" --data_dir="$DATA_DIR" --problem="$PROBLEM" --source="$SOURCE"
        --work="$WORK" --build="$BUILD" --threads="${THREADS:-2}" --beam_size="${BEAM:-4}"
        --batch_size="${BATCH:-32}")
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
for run in $(seq "$RUNS"); do
  "$PYTHON" "$ROOT/bench/python/bench_translator.py" --side=decoder "${COMMON[@]}" >>"$RESULTS"
  "$PYTHON" "$ROOT/bench/python/bench_translator.py" --side=python "${COMMON[@]}" >>"$RESULTS"
  for split in 2x1 1x2; do
    "$PYTHON" "$ROOT/bench/python/bench_translator.py" --side=ctranslate2 --split="$split" \
      --ct2_dir="$WORK/ct2" "${COMMON[@]}" >>"$RESULTS"
  done
  echo "run $run of $RUNS done"
done
"$PYTHON" "$ROOT/bench/python/summarize.py" "$RESULTS" "$WORK"
