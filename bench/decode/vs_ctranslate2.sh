#!/usr/bin/env bash
# Decoding against CTranslate2 on the same weights: a t2t run (by default a
# transformer_tiny trained on the bundled sample) decodes the sample's dev
# sources with t2t-bench-decode in float32 and with --quantize=int8, and the
# same checkpoint exported by tools/export_ctranslate2.py (float32, int8)
# decodes the same source ids with CTranslate2 (ctranslate2_decode.py) at
# inter x intra threads 2x1 and 1x2, doing T2T's search (patience 2, its
# finished hypotheses re-ranked with T2T's length penalty) and its own.
# Each configuration runs RUNS times, alternating; the table shows medians,
# each engine's ratio to CTranslate2's best split in the same precision and
# search, and how many sentences got t2t float32's output ids.
#
#   bench/decode/vs_ctranslate2.sh       # needs a built t2t and ctranslate2 in the venv
# Environment: RUNS (3), BEAM (4), BATCH (32), PASSES (5), WORK
# (/tmp/t2t_bench_vs_ct2), RUN_DIR and DATA_DIR (a trained run of
# translate_enzh_sample to use instead of training one), TRAIN_STEPS (600),
# SOURCE (data/sample/dev.en).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
WORK=${WORK:-/tmp/t2t_bench_vs_ct2}
RUNS=${RUNS:-3}
BEAM=${BEAM:-4}
BATCH=${BATCH:-32}
PASSES=${PASSES:-5}
SOURCE=${SOURCE:-$ROOT/data/sample/dev.en}
BENCH="$BUILD/t2t-bench-decode"
bench_require "$BENCH" "$BUILD/t2t-datagen" "$BUILD/t2t-trainer"
"$PYTHON" -c 'import ctranslate2' 2>/dev/null \
  || { echo "no ctranslate2 in $PYTHON: run tools/setup.sh (or pip install ctranslate2)" >&2; exit 1; }
export OMP_WAIT_POLICY=PASSIVE
mkdir -p "$WORK"

if [ -z "${RUN_DIR:-}" ]; then
  DATA_DIR=$WORK/data RUN_DIR=$WORK/run
  if [ ! -f "$RUN_DIR/checkpoint" ]; then
    echo "training transformer_tiny on the sample for ${TRAIN_STEPS:-600} steps"
    "$BUILD/t2t-datagen" --problem=translate_enzh_sample --data_dir="$DATA_DIR" >"$WORK/datagen.log" 2>&1
    "$BUILD/t2t-trainer" --problem=translate_enzh_sample --model=transformer \
      --hparams_set=transformer_tiny --hparams_file="$ROOT/configs/hparams/transformer_tiny_cpu.yaml" \
      --data_dir="$DATA_DIR" --output_dir="$RUN_DIR" --train_steps="${TRAIN_STEPS:-600}" \
      --local_eval_frequency="${TRAIN_STEPS:-600}" --eval_steps=2 --random_seed=1 >"$WORK/train.log" 2>&1
  fi
fi
rm -rf "$WORK/export" "$WORK/ct2-float32" "$WORK/ct2-int8" "$WORK/ids"
mkdir -p "$WORK/ids"
"$BENCH" --output_dir="$RUN_DIR" --data_dir="$DATA_DIR" --source="$SOURCE" --export_dir="$WORK/export" >/dev/null
for q in float32 int8; do
  "$PYTHON" "$ROOT/tools/export_ctranslate2.py" --output_dir="$RUN_DIR" \
    --ctranslate2_dir="$WORK/ct2-$q" --quantization="$q" >/dev/null
done

RESULTS=$WORK/results.jsonl
: >"$RESULTS"
for run in $(seq "$RUNS"); do
  for q in none int8; do
    "$BENCH" --output_dir="$RUN_DIR" --data_dir="$DATA_DIR" --source="$SOURCE" --beam_size="$BEAM" \
      --batch_size="$BATCH" --passes="$PASSES" --quantize="$q" --write_ids="$WORK/ids/t2t-$q" \
      2>/dev/null | tail -n 1 >>"$RESULTS"
  done
  for q in float32 int8; do
    for search in t2t own; do
      for split in 2x1 1x2; do
        "$PYTHON" "$ROOT/bench/decode/ctranslate2_decode.py" --model_dir="$WORK/ct2-$q" \
          --sources="$WORK/export/sources.json" --beam_size="$BEAM" --batch_size="$BATCH" \
          --passes="$PASSES" --inter_threads="${split%x*}" --intra_threads="${split#*x}" \
          --search="$search" --write_ids="$WORK/ids/ct2-$q-$search-$split" >>"$RESULTS"
      done
    done
  done
  echo "run $run of $RUNS done"
done
"$PYTHON" "$ROOT/bench/decode/summarize_vs_ctranslate2.py" "$RESULTS" "$WORK/ids"
