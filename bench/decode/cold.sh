#!/usr/bin/env bash
# Decoding a file as users do, against CTranslate2: a fresh t2t-decoder
# process per run and a fresh CTranslate2 process per run (cold.py says what
# each figure counts), on the Tatoeba en-zh dev set, at several training
# stages, in float32 and int8; the warm figures (t2t-bench-decode after an
# untimed pass, CTranslate2's second call) beside them.
#   MODELS="tiny800 tiny3000 base" (default: all three)
#     tinyN: transformer_tiny trained N steps on TATOEBA_DIR
#            (configs/hparams/transformer_tiny_cpu.yaml, warm-up 400 steps)
#     base:  transformer_base trained BASE_STEPS (400) steps, batch 1024
#            tokens, warm-up 200: a model that ends its sentences
# t2t decodes the run's last checkpoint as t2t-avg-all writes it (float32),
# and as t2t-avg-all --quantize=int8 writes it (int8, loaded without
# quantizing); CTranslate2 its own conversions of the same weights.
#
#   bench/decode/cold.sh
# With a lexical shortlist (t2t-shortlist on the training shards, SL_BEST
# targets per source token and SL_FREQUENT always allowed, named <id_N> so
# that CTranslate2's conversions take the same file as their vmap), every
# side runs again with it: t2t --shortlist (--shortlist_best=SHORTLIST_BEST,
# 0: all), CTranslate2 use_vmap=True. BLEU of each row against REFERENCE.
# Environment: MODELS, RUNS (3), THREADS (2), BEAM (4), BATCH (32),
# SOURCE (TATOEBA_DIR/dev.en), REFERENCE (TATOEBA_DIR/dev.zh with the default
# SOURCE), TATOEBA_DIR (../shared/data/tatoeba-enzh), SHORTLIST (1; 0: none),
# SL_BEST (50), SL_FREQUENT (100), SHORTLIST_BEST (0),
# WORK (/tmp/t2t_bench_cold; trained runs are kept there and reused).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
TATOEBA_DIR=${TATOEBA_DIR:-$ROOT/../shared/data/tatoeba-enzh}
[ -z "${SOURCE:-}" ] && REFERENCE=${REFERENCE:-$TATOEBA_DIR/dev.zh}
SOURCE=${SOURCE:-$TATOEBA_DIR/dev.en}
REFERENCE=${REFERENCE:-}
SHORTLIST=${SHORTLIST:-1}
WORK=${WORK:-/tmp/t2t_bench_cold}
MODELS=${MODELS:-tiny800 tiny3000 base}
PROBLEM=translate_enzh_tatoeba
[ -f "$TATOEBA_DIR/train.en" ] || { echo "no Tatoeba data in $TATOEBA_DIR: set TATOEBA_DIR" >&2; exit 1; }
bench_require "$BUILD/t2t-decoder" "$BUILD/t2t-bench-decode" "$BUILD/t2t-avg-all" "$BUILD/t2t-shortlist"
[ -x /usr/bin/time ] || { echo "no /usr/bin/time (apt-get install time): it measures peak RSS" >&2; exit 1; }
[ -d "$BUILD/python/t2t" ] || { echo "no $BUILD/python/t2t: build t2t with its Python module" >&2; exit 1; }
"$PYTHON" -c 'import ctranslate2' 2>/dev/null \
  || { echo "no ctranslate2 in $PYTHON: run tools/setup.sh (or pip install ctranslate2)" >&2; exit 1; }
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH="$BUILD/python"
mkdir -p "$WORK"

DATA_DIR=$WORK/data
[ -f "$DATA_DIR/.done" ] || {
  "$BUILD/t2t-datagen" --problem="$PROBLEM" --data_dir="$DATA_DIR" --tmp_dir="$TATOEBA_DIR" \
    >"$WORK/datagen.log" 2>&1
  touch "$DATA_DIR/.done"
}

# train NAME HPARAMS_SET STEPS FLAGS...: a run in $WORK/NAME/run unless it is there.
train() {
  local name=$1 set=$2 steps=$3; shift 3
  mkdir -p "$WORK/$name"
  bench_train "$PROBLEM" "$set" "$steps" "$DATA_DIR" "$WORK/$name/run" "$WORK/$name" "$@"
}

for model in $MODELS; do
  case "$model" in
    tiny[0-9]*)
      train "$model" transformer_tiny "${model#tiny}" \
        --hparams_file="$ROOT/configs/hparams/transformer_tiny_cpu.yaml" ;;
    base)
      train base transformer_base "${BASE_STEPS:-400}" \
        --hparams=batch_size=1024,max_length=64,learning_rate_warmup_steps=200 ;;
    *) echo "MODELS: $model is not tinyN or base" >&2; exit 1 ;;
  esac
  dir=$WORK/$model
  rm -rf "$dir/ct2-float32" "$dir/ct2-int8" "$dir/avg" "$dir/int8"
  vmap=()
  if [ "$SHORTLIST" = 1 ]; then
    # From the training shards the model learnt from, as a user makes it.
    "$BUILD/t2t-shortlist" --problem="$PROBLEM" --data_dir="$DATA_DIR" \
      --output="$dir/shortlist.vmap" --tokens=ids --best="${SL_BEST:-50}" \
      --frequent="${SL_FREQUENT:-100}" >"$dir/shortlist.log" 2>&1 \
      || { cat "$dir/shortlist.log" >&2; exit 1; }
    vmap=(--vocab_mapping="$dir/shortlist.vmap")
  fi
  for q in float32 int8; do
    "$PYTHON" "$ROOT/tools/export_ctranslate2.py" --output_dir="$dir/run" \
      --ctranslate2_dir="$dir/ct2-$q" --quantization="$q" "${vmap[@]}" >/dev/null
  done
  # What users decode: the run's last checkpoint as t2t-avg-all writes it
  # (the weights without the optimizer's state), in float32 and in int8.
  for q in none int8; do
    out=$dir/avg; [ "$q" = int8 ] && out=$dir/int8
    "$BUILD/t2t-avg-all" --model_dir="$dir/run" --output_dir="$out" --n=1 --quantize="$q" \
      $([ "$q" = int8 ] && echo --problem="$PROBLEM" --data_dir="$DATA_DIR") \
      >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
  done
  echo "== $model"
  "$PYTHON" "$ROOT/bench/decode/cold.py" run --float_dir="$dir/avg" --int8_dir="$dir/int8" \
    --data_dir="$DATA_DIR" --problem="$PROBLEM" --source="$SOURCE" --work="$dir" \
    --build="$BUILD" --ct2_dir="$dir/ct2" \
    --runs="${RUNS:-3}" --threads="${THREADS:-2}" --beam_size="${BEAM:-4}" \
    --batch_size="${BATCH:-32}" --reference="$REFERENCE" \
    $([ "$SHORTLIST" = 1 ] && echo --shortlist="$dir/shortlist.vmap" \
        --shortlist_best="${SHORTLIST_BEST:-0}") | tee "$dir/table.md"
done
