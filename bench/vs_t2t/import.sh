#!/usr/bin/env bash
# A model real Tensor2Tensor trained, brought to t2t: decoded by T2T itself,
# by t2t straight from T2T's output directory, and, once converted
# (t2t-import) and exported (tools/export_ctranslate2.py), by CTranslate2 on
# the same weights (bench/decode/vs_ctranslate2.sh: float32 and int8).
#   MODEL=tiny (default): the transformer_tiny T2T trained in bench/vs_t2t/run.sh
#     (T2T_RUN, its newest checkpoint), on T2T's Tatoeba data directory (DATA).
#   MODEL=base: transformer_base trained STEPS (20) steps by T2T's own trainer
#     here, on the same data directory: a few steps make no translator, but
#     T2T's variables and sizes are those of its most used model. It decodes
#     every sentence to its full length, so SENTENCES (100) of the dev set,
#     one timed pass (PASSES).
# Reports, besides vs_ctranslate2.sh's table: how many of the dev set's
# translations t2t gives exactly as T2T's decoder does (beam 4, alpha 0.6,
# T2T's command line), and the wall time of one sentence decoded from
# scratch (process start, checkpoint load, decode) by T2T, by t2t from
# T2T's directory and by t2t from the converted one.
#
#   bench/vs_t2t/run.sh first (for its data directory and MODEL=tiny's run)
#   bench/vs_t2t/import.sh           # MODEL=tiny RUNS=3 SENTENCES=1000 WORK=/tmp/t2t_vs_t2t_import-MODEL
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
T2T_REAL=${T2T_REAL:-/tmp/t2t-real}
TATOEBA=${TATOEBA:-$ROOT/../shared/data/tatoeba-enzh}
MODEL=${MODEL:-tiny}
WORK=${WORK:-/tmp/t2t_vs_t2t_import-$MODEL}
DATA=${DATA:-/tmp/t2t_vs_t2t/data}
PROBLEM=translate_enzh_tatoeba
USR=$ROOT/../shared/t2t-reference-env/usr
RECIPE="batch_size=2048,max_length=64,learning_rate_warmup_steps=400,layer_prepostprocess_dropout=0.3,attention_dropout=0.1,relu_dropout=0.1"
[ -x "$T2T_REAL/venv/bin/t2t-decoder" ] || { echo "no T2T at $T2T_REAL: run ../shared/t2t-reference-env/setup.sh" >&2; exit 1; }
[ -f "$DATA/$PROBLEM-dev-00000-of-00001" ] || { echo "no T2T data directory at $DATA: run bench/vs_t2t/run.sh first (or DATA=...)" >&2; exit 1; }
bench_require "$BUILD/t2t-decoder" "$BUILD/t2t-import"
export CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
mkdir -p "$WORK"
# The sentences decoded: the dev set, or its first SENTENCES lines.
SOURCE=$WORK/dev.en
case "$MODEL" in
  tiny)
    T2T_RUN=${T2T_RUN:-/tmp/t2t_vs_t2t/t2t-real-1}; SET=transformer_tiny; HP=$RECIPE
    head -n "${SENTENCES:-1000}" "$TATOEBA/dev.en" >"$SOURCE" ;;
  base)
    # An untrained model decodes every sentence to its full length: fewer
    # sentences, one timed pass.
    head -n "${SENTENCES:-100}" "$TATOEBA/dev.en" >"$SOURCE"; export PASSES=${PASSES:-1}
    T2T_RUN=$WORK/t2t-real; SET=transformer_base; HP="batch_size=1024,max_length=64"
    if [ ! -f "$T2T_RUN/checkpoint" ]; then
      echo "T2T trains transformer_base for ${STEPS:-20} steps"
      "$T2T_REAL/venv/bin/t2t-trainer" --t2t_usr_dir="$USR" --problem=$PROBLEM --data_dir="$DATA" \
        --model=transformer --hparams_set=$SET --hparams="$HP" --output_dir="$T2T_RUN" \
        --train_steps="${STEPS:-20}" --schedule=train --local_eval_frequency="${STEPS:-20}" \
        --random_seed=1 >"$WORK/t2t-train.log" 2>&1
    fi ;;
  *) echo "MODEL=$MODEL: use tiny or base" >&2; exit 1 ;;
esac
[ -f "$T2T_RUN/checkpoint" ] || { echo "no T2T run at $T2T_RUN" >&2; exit 1; }
CKPT=$(sed -n 's/^model_checkpoint_path: "\(.*\)"/\1/p' "$T2T_RUN/checkpoint")
CKPT=$T2T_RUN/${CKPT##*/}
echo "== $MODEL: $CKPT"

# 1. The dev set, beam 4: T2T's decoder, then t2t's on T2T's directory.
T2T_FLAGS=(--problem=$PROBLEM --data_dir="$DATA" --model=transformer --hparams_set=$SET
           --output_dir="$T2T_RUN" --checkpoint_path="$CKPT" --decode_from_file="$SOURCE")
if [ ! -f "$WORK/dev.t2t-real.zh" ]; then
  "$T2T_REAL/venv/bin/t2t-decoder" --t2t_usr_dir="$USR" "${T2T_FLAGS[@]}" --hparams="$HP" \
    --decode_hparams="beam_size=4,alpha=0.6" --decode_to_file="$WORK/dev.t2t-real.zh" \
    >"$WORK/t2t-decode.log" 2>&1
fi
"$BUILD/t2t-decoder" "${T2T_FLAGS[@]}" --decode_hparams="beam_size=4,alpha=0.6" \
  --decode_to_file="$WORK/dev.t2t.zh" --log_level=warning
same=$(paste -d '\t' "$WORK/dev.t2t.zh" "$WORK/dev.t2t-real.zh" | awk -F '\t' '$1 == $2' | wc -l)
echo "identical to T2T's own translations: $same of $(wc -l <"$WORK/dev.t2t-real.zh")"

# 2. One sentence from scratch, three ways (median of 3).
head -n 1 "$SOURCE" >"$WORK/one.en"
rm -rf "$WORK/imported"
"$BUILD/t2t-import" --problem=$PROBLEM --data_dir="$DATA" --model=transformer --hparams_set=$SET \
  --output_dir="$T2T_RUN" --checkpoint_path="$CKPT" --import_dir="$WORK/imported" --log_level=warning
# Milliseconds, the median of 3 runs.
median3() {
  local t=() s
  for _ in 1 2 3; do
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
    t+=($((($(date +%s%N) - s) / 1000000)))
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}
one=(--decode_from_file="$WORK/one.en" --decode_to_file="$WORK/one.zh")
echo "one sentence from scratch, milliseconds (median of 3):"
echo "  T2T t2t-decoder:               $(median3 "$T2T_REAL/venv/bin/t2t-decoder" --t2t_usr_dir="$USR" "${T2T_FLAGS[@]}" --hparams="$HP" "${one[@]}")"
echo "  t2t-decoder, T2T's directory:  $(median3 "$BUILD/t2t-decoder" "${T2T_FLAGS[@]}" "${one[@]}")"
echo "  t2t-decoder, converted:        $(median3 "$BUILD/t2t-decoder" --problem=$PROBLEM --data_dir="$DATA" --model=transformer --output_dir="$WORK/imported" "${one[@]}")"

# 3. Against CTranslate2 on the converted weights.
MODEL=tatoeba RUN_DIR="$WORK/imported" DATA_DIR="$DATA" WORK="$WORK/vs_ct2" SOURCE="$SOURCE" \
  RUNS=${RUNS:-3} bash "$ROOT/bench/decode/vs_ctranslate2.sh"
