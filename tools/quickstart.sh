#!/usr/bin/env bash
# Installs what is missing, builds t2t (Release) into build/, then runs the
# main job on the bundled English-Chinese sample (data/sample).
# Output goes to ${T2T_QUICKSTART_DIR:-t2t_quickstart}/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
t2t_setup

BIN="$T2T_BUILD_DIR"
WORK=${T2T_QUICKSTART_DIR:-$T2T_ROOT/t2t_quickstart}
DATA="$WORK/data"
PROBLEM=translate_enzh_sample

say "1/4 datagen: $PROBLEM -> $DATA"
"$BIN/t2t-datagen" --problem=$PROBLEM --data_dir="$DATA" --tmp_dir="$WORK/tmp"
"$BIN/t2t-datagen" --inspect="$DATA/$PROBLEM-dev-00000-of-00001" --inspect_examples=2 \
  --problem=$PROBLEM --data_dir="$DATA"

OUT="$WORK/train"
say "2/4 training transformer_tiny on $PROBLEM -> $OUT (about two minutes on 2 cores)"
"$BIN/t2t-trainer" --problem=$PROBLEM --model=transformer --hparams_set=transformer_tiny \
  --hparams_file="$T2T_ROOT/configs/hparams/transformer_tiny_cpu.yaml" \
  --data_dir="$DATA" --output_dir="$OUT" --train_steps=${T2T_QUICKSTART_STEPS:-1000} \
  --local_eval_frequency=500 --log_step_count_steps=100

say "data: $DATA; model, checkpoints and TensorBoard events: $OUT (tensorboard --logdir=$OUT)"
say "decoding and BLEU (steps 3-4) are not part of this build yet, so the quickstart stops here"
