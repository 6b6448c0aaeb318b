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
  --data_dir="$DATA" --output_dir="$OUT" --train_steps=${T2T_QUICKSTART_STEPS:-1500} \
  --local_eval_frequency=500 --log_step_count_steps=100 --random_seed=1

# dev.* were held back from training: the model has never seen these sentences.
SRC="$T2T_ROOT/data/sample/dev.en"
REF="$T2T_ROOT/data/sample/dev.zh"
HYP="$WORK/dev.decoded.zh"
say "3/4 decoding $SRC with beam 4 -> $HYP"
"$BIN/t2t-decoder" --problem=$PROBLEM --model=transformer --hparams_set=transformer_tiny \
  --data_dir="$DATA" --output_dir="$OUT" --decode_hparams='beam_size=4,alpha=0.6' \
  --decode_from_file="$SRC" --decode_to_file="$HYP" --log_level=warning

say "4/4 BLEU of $HYP against $REF"
"$BIN/t2t-bleu" --translation="$HYP" --reference="$REF" --bleu_variant=cased | tee "$WORK/bleu.txt"

say "a few dev sentences (source / reference / translation):"
paste -d '\n' <(head -n 5 "$SRC") <(head -n 5 "$REF") <(head -n 5 "$HYP") /dev/null /dev/null \
  | head -n 25 | awk 'NR % 5 == 1 {print "  src: " $0} NR % 5 == 2 {print "  ref: " $0} NR % 5 == 3 {print "  hyp: " $0} NR % 5 == 4 {print ""}'

say "data: $DATA"
say "model, checkpoints, TensorBoard events: $OUT (tensorboard --logdir=$OUT)"
say "translations: $HYP; BLEU: $WORK/bleu.txt"
