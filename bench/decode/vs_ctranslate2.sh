#!/usr/bin/env bash
# Decoding against CTranslate2 on the same weights: t2t-bench-decode decodes
# in float32 and with --quantize=int8, and the same checkpoint exported by
# tools/export_ctranslate2.py (float32, int8) decodes the same source ids
# with CTranslate2 (ctranslate2_decode.py) at inter x intra threads 2x1 and
# 1x2, doing T2T's search (patience 2, its finished hypotheses re-ranked
# with T2T's length penalty) and its own.
#   MODEL=tiny (default): transformer_tiny trained on the bundled sample,
#     decoding the sample's dev sentences.
#   MODEL=tatoeba: transformer_tiny trained on the Tatoeba en-zh data
#     (TATOEBA_DIR, ../shared/data/tatoeba-enzh), decoding its dev.en.
#   MODEL=base: transformer_base with random weights (a run written by
#     t2t-bench-decode --write_run) decoding SENTENCES synthetic sources of
#     SOURCE_LENGTH ids; such a model hardly ever ends a sentence, so both
#     engines decode the same fixed length (source + EXTRA_LENGTH).
# Each configuration runs RUNS times, alternating, each time after one
# untimed pass over the sources (both engines); the table shows medians,
# each engine's ratio to CTranslate2's best split in the same precision and
# search, and how many sentences got t2t float32's output ids.
#
#   bench/decode/vs_ctranslate2.sh       # needs a built t2t and ctranslate2 in the venv
#   MODEL=base bench/decode/vs_ctranslate2.sh
# Environment: RUNS (3), BEAM (4), BATCH (32), PASSES (5; 2 for base),
# EXTRA_LENGTH (100; 20 for base), WORK (/tmp/t2t_bench_vs_ct2[-MODEL]);
# tiny and tatoeba: RUN_DIR and DATA_DIR (a trained run of the problem to
# use instead of training one), TRAIN_STEPS (600; 3000 for tatoeba), SOURCE
# (data/sample/dev.en; TATOEBA_DIR/dev.en); base: SENTENCES (64),
# SOURCE_LENGTH (20), VOCAB (8000).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
MODEL=${MODEL:-tiny}
TATOEBA_DIR=${TATOEBA_DIR:-$ROOT/../shared/data/tatoeba-enzh}
case "$MODEL" in
  tiny)
    WORK=${WORK:-/tmp/t2t_bench_vs_ct2}; PASSES=${PASSES:-5}; EXTRA_LENGTH=${EXTRA_LENGTH:-100}
    PROBLEM=translate_enzh_sample; TRAIN_STEPS=${TRAIN_STEPS:-600}
    SOURCE=${SOURCE:-$ROOT/data/sample/dev.en} ;;
  tatoeba)
    [ -f "$TATOEBA_DIR/train.en" ] \
      || { echo "no Tatoeba data in $TATOEBA_DIR: set TATOEBA_DIR" >&2; exit 1; }
    WORK=${WORK:-/tmp/t2t_bench_vs_ct2-tatoeba}; PASSES=${PASSES:-5}; EXTRA_LENGTH=${EXTRA_LENGTH:-100}
    PROBLEM=translate_enzh_tatoeba; TRAIN_STEPS=${TRAIN_STEPS:-3000}
    SOURCE=${SOURCE:-$TATOEBA_DIR/dev.en} ;;
  base) WORK=${WORK:-/tmp/t2t_bench_vs_ct2-base}; PASSES=${PASSES:-2}; EXTRA_LENGTH=${EXTRA_LENGTH:-20} ;;
  *) echo "MODEL=$MODEL: use tiny, tatoeba or base" >&2; exit 1 ;;
esac
RUNS=${RUNS:-3}
BEAM=${BEAM:-4}
BATCH=${BATCH:-32}
BENCH="$BUILD/t2t-bench-decode"
bench_require "$BENCH" "$BUILD/t2t-datagen" "$BUILD/t2t-trainer"
"$PYTHON" -c 'import ctranslate2' 2>/dev/null \
  || { echo "no ctranslate2 in $PYTHON: run tools/setup.sh (or pip install ctranslate2)" >&2; exit 1; }
export OMP_WAIT_POLICY=PASSIVE
mkdir -p "$WORK"

rm -rf "$WORK/export" "$WORK/ct2-float32" "$WORK/ct2-int8" "$WORK/ids"
mkdir -p "$WORK/ids"
if [ "$MODEL" = base ]; then
  RUN_DIR=$WORK/run
  MODEL_FLAGS=(--hparams_set=transformer_base --vocab="${VOCAB:-8000}" --seed=1
               --max_sentences="${SENTENCES:-64}" --source_length="${SOURCE_LENGTH:-20}")
  rm -rf "$RUN_DIR"
  "$BENCH" "${MODEL_FLAGS[@]}" --write_run="$RUN_DIR" --export_dir="$WORK/export" >/dev/null
else
  if [ -z "${RUN_DIR:-}" ]; then
    DATA_DIR=$WORK/data RUN_DIR=$WORK/run
    bench_train_tiny "$PROBLEM" "$TATOEBA_DIR" "$TRAIN_STEPS" "$DATA_DIR" "$RUN_DIR" "$WORK"
  fi
  MODEL_FLAGS=(--output_dir="$RUN_DIR" --data_dir="$DATA_DIR" --problem="$PROBLEM" --source="$SOURCE")
  "$BENCH" "${MODEL_FLAGS[@]}" --export_dir="$WORK/export" >/dev/null
fi
for q in float32 int8; do
  "$PYTHON" "$ROOT/tools/export_ctranslate2.py" --output_dir="$RUN_DIR" \
    --ctranslate2_dir="$WORK/ct2-$q" --quantization="$q" >/dev/null
done

RESULTS=$WORK/results.jsonl
: >"$RESULTS"
for run in $(seq "$RUNS"); do
  for q in none int8; do
    "$BENCH" "${MODEL_FLAGS[@]}" --beam_size="$BEAM" --extra_length="$EXTRA_LENGTH" \
      --batch_size="$BATCH" --passes="$PASSES" --quantize="$q" --write_ids="$WORK/ids/t2t-$q" \
      --warmup_batches=-1 \
      2>/dev/null | tail -n 1 >>"$RESULTS"
  done
  for q in float32 int8; do
    for search in t2t own; do
      for split in 2x1 1x2; do
        "$PYTHON" "$ROOT/bench/decode/ctranslate2_decode.py" --model_dir="$WORK/ct2-$q" \
          --sources="$WORK/export/sources.json" --beam_size="$BEAM" --batch_size="$BATCH" \
          --passes="$PASSES" --inter_threads="${split%x*}" --intra_threads="${split#*x}" \
          --extra_length="$EXTRA_LENGTH" \
          --search="$search" --write_ids="$WORK/ids/ct2-$q-$search-$split" >>"$RESULTS"
      done
    done
  done
  echo "run $run of $RUNS done"
done
"$PYTHON" "$ROOT/bench/decode/summarize_vs_ctranslate2.py" "$RESULTS" "$WORK/ids"
