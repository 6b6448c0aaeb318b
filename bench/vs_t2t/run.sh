#!/usr/bin/env bash
# t2t beside real Tensor2Tensor 1.15.7, trained on one data directory for the
# same wall time, one core each, at the same time:
#   1. T2T's own datagen makes the data directory from Tatoeba en-zh (T2T's
#      SubwordTextEncoder vocabularies and TFRecord shards); t2t reads it as
#      it is.
#   2. Both train SET (transformer_tiny; or transformer_relative_tiny, or
#      any set both have) with the README recipe's overrides for
#      MINUTES minutes (T2T: schedule=train, one intra- and one inter-op
#      thread; t2t: --threads=1), each pinned to its own core, saving a
#      checkpoint every EVERY steps (T2T's trainer saves every
#      max(--iterations_per_loop, --local_eval_frequency) steps and ignores
#      --save_checkpoints_steps, so it gets --local_eval_frequency). A side
#      killed at the time limit keeps the checkpoints it had saved.
#   3. Every checkpoint of each is decoded by its own decoder (the dev set,
#      beam 4, alpha 0.6) and scored by sacreBLEU (tok zh, t2t-bleu).
#   4. summarize.py prints steps/s, the training loss at equal steps and the
#      dev BLEU curve of each.
#
#   T2T_REAL=/tmp/t2t-real ../shared/t2t-reference-env/setup.sh   # once
#   bench/vs_t2t/run.sh      # MINUTES=20 EVERY=500 SEED=1 WORK=/tmp/t2t_vs_t2t
#   OURS_FLAGS=--mixed_precision=bf16 WORK=/tmp/t2t_vs_t2t_bf16 DATA=/tmp/t2t_vs_t2t/data \
#     bench/vs_t2t/run.sh    # t2t's trainer with extra flags; DATA: reuse a data directory
#   SET=transformer_relative_tiny WORK=/tmp/t2t_vs_t2t_relative DATA=/tmp/t2t_vs_t2t/data \
#     bench/vs_t2t/run.sh    # relative position attention on both sides
#   MODEL=evolved_transformer SET=evolved_transformer_tiny WORK=/tmp/t2t_vs_t2t_evolved \
#     DATA=/tmp/t2t_vs_t2t/data bench/vs_t2t/run.sh    # the Evolved Transformer
# EXTRA_HPARAMS=... adds overrides to the recipe on both sides.
#
# Needs ../shared/data/tatoeba-enzh (TATOEBA=...) and the reference
# environment (T2T_REAL=...); a phase whose results exist is skipped, so a
# second run only fills in what is missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
HERE=$ROOT/bench/vs_t2t
T2T_REAL=${T2T_REAL:-/tmp/t2t-real}
TATOEBA=${TATOEBA:-$ROOT/../shared/data/tatoeba-enzh}
WORK=${WORK:-/tmp/t2t_vs_t2t}
MINUTES=${MINUTES:-20}
EVERY=${EVERY:-500}
SEED=${SEED:-1}
SET=${SET:-transformer_tiny}
MODEL=${MODEL:-transformer}
PROBLEM=translate_enzh_tatoeba
RECIPE="batch_size=2048,max_length=64,learning_rate_warmup_steps=400,layer_prepostprocess_dropout=0.3,attention_dropout=0.1,relu_dropout=0.1${EXTRA_HPARAMS:+,$EXTRA_HPARAMS}"
USR=$ROOT/../shared/t2t-reference-env/usr
[ -x "$T2T_REAL/venv/bin/python" ] || { echo "no T2T at $T2T_REAL: run ../shared/t2t-reference-env/setup.sh" >&2; exit 1; }
[ -f "$TATOEBA/train.en" ] || { echo "no Tatoeba data at $TATOEBA (TATOEBA=...)" >&2; exit 1; }
bench_require "$BUILD/t2t-trainer" "$BUILD/t2t-decoder" "$BUILD/t2t-bleu"
export CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2
mkdir -p "$WORK/logs"
T2T_RUN=$WORK/t2t-real-$SEED OUR_RUN=$WORK/t2t-$SEED DATA=${DATA:-$WORK/data}
OURS_FLAGS=${OURS_FLAGS:-}

# 1. T2T's data directory
if [ ! -f "$DATA/$PROBLEM-dev-00000-of-00001" ]; then
  echo "T2T datagen -> $DATA"
  mkdir -p "$WORK/tmp" && cp "$TATOEBA"/{train,dev}.{en,zh} "$WORK/tmp/"
  "$T2T_REAL/venv/bin/python" "$T2T_REAL/datagen.py" --t2t_usr_dir="$USR" --problem=$PROBLEM \
    --data_dir="$DATA" --tmp_dir="$WORK/tmp" >"$WORK/logs/datagen.log" 2>&1
fi

# 2. Both trainers at once, one core each
if [ ! -f "$T2T_RUN/checkpoint" ] || [ ! -f "$OUR_RUN/checkpoint" ]; then
  rm -rf "$T2T_RUN" "$OUR_RUN"
  echo "training both for $MINUTES minutes (T2T on core 0, t2t on core 1)"
  taskset -c 0 timeout -s INT "${MINUTES}m" "$T2T_REAL/venv/bin/t2t-trainer" \
    --t2t_usr_dir="$USR" --problem=$PROBLEM --data_dir="$DATA" --model=$MODEL \
    --hparams_set=$SET --hparams="$RECIPE" --output_dir="$T2T_RUN" \
    --train_steps=1000000 --schedule=train --local_eval_frequency="$EVERY" \
    --keep_checkpoint_max=1000 --random_seed="$SEED" --log_step_count_steps=100 \
    --inter_op_parallelism_threads=1 --intra_op_parallelism_threads=1 \
    >"$WORK/logs/train-t2t-real-$SEED.log" 2>&1 &
  real_pid=$!
  taskset -c 1 timeout -s TERM "${MINUTES}m" "$BUILD/t2t-trainer" --problem=$PROBLEM \
    --data_dir="$DATA" --model=$MODEL --hparams_set=$SET --hparams="$RECIPE" \
    --output_dir="$OUR_RUN" --train_steps=1000000 --schedule=train \
    --save_checkpoints_steps="$EVERY" --keep_checkpoint_max=0 --random_seed="$SEED" \
    --log_step_count_steps=100 --threads=1 $OURS_FLAGS >"$WORK/logs/train-t2t-$SEED.log" 2>&1 &
  our_pid=$!
  wait $real_pid || true   # timeout's exit status
  wait $our_pid || true
fi

# 3. Every checkpoint decoded and scored, each side with its own decoder
# Each decode's wall time (both decoders on all cores, one after the other),
# graph building and model loading included, as a user waits for it.
timed() {  # timed SIDE STEP COMMAND...
  local side=$1 step=$2 start=$SECONDS
  shift 2
  "$@"
  printf '%s\t%s\t%s\n' "$side" "$step" $((SECONDS - start)) >>"$WORK/decode-seconds-$SEED.tsv"
}
score() {  # score SIDE STEP TRANSLATIONS
  "$BUILD/t2t-bleu" --translation="$3" --reference="$TATOEBA/dev.zh" --tokenize=zh 2>/dev/null |
    sed -n 's/^BLEU_cased = \([0-9.]*\).*/\1/p' | sed "s/^/$1\t$2\t/" >>"$WORK/bleu-$SEED.tsv"
}
touch "$WORK/bleu-$SEED.tsv"
for index in "$T2T_RUN"/model.ckpt-*.index; do
  step=${index##*ckpt-}; step=${step%.index}
  grep -q "^t2t-real	$step	" "$WORK/bleu-$SEED.tsv" && continue
  out=$WORK/dev-t2t-real-$SEED-$step.zh
  timed t2t-real "$step" "$T2T_REAL/venv/bin/t2t-decoder" --t2t_usr_dir="$USR" --problem=$PROBLEM --data_dir="$DATA" \
    --model=$MODEL --hparams_set=$SET --hparams="$RECIPE" \
    --output_dir="$T2T_RUN" --checkpoint_path="${index%.index}" \
    --decode_hparams="beam_size=4,alpha=0.6" --decode_from_file="$TATOEBA/dev.en" \
    --decode_to_file="$out" >"$WORK/logs/decode-t2t-real-$SEED-$step.log" 2>&1
  score t2t-real "$step" "$out"
done
for ckpt in "$OUR_RUN"/model.ckpt-*.pt; do
  step=${ckpt##*ckpt-}; step=${step%.pt}
  grep -q "^t2t	$step	" "$WORK/bleu-$SEED.tsv" && continue
  out=$WORK/dev-t2t-$SEED-$step.zh
  timed t2t "$step" "$BUILD/t2t-decoder" --problem=$PROBLEM --data_dir="$DATA" \
    --model=$MODEL --output_dir="$OUR_RUN" --checkpoint_path="$ckpt" --decode_hparams="beam_size=4,alpha=0.6" \
    --decode_from_file="$TATOEBA/dev.en" --decode_to_file="$out" --log_level=warning \
    >"$WORK/logs/decode-t2t-$SEED-$step.log" 2>&1
  score t2t "$step" "$out"
done

# 4. The table
"$PYTHON" "$HERE/summarize.py" --work="$WORK" --seed="$SEED" --minutes="$MINUTES"
