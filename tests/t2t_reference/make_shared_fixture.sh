#!/usr/bin/env bash
# Makes tests/fixtures/t2t_run_shared/ with real Tensor2Tensor 1.15.7: the
# other layout of T2T's Transformer than tests/fixtures/t2t_run's. One
# vocabulary shared by both languages (problem translate_enzh_shared_fixture,
# usr/), post-norm transformer_base_v1 (layer_postprocess_sequence "dan",
# inputs, targets and softmax sharing one embedding), 4 steps of T2T's
# own trainer at small sizes, and T2T's own greedy and beam-4 decodes of 12
# sentences. tests/tools/test_t2t_import.cc reads it; CI needs no TensorFlow.
#
#   T2T_REAL=/tmp/t2t-real ../shared/t2t-reference-env/setup.sh   # once
#   T2T_REAL=/tmp/t2t-real tests/t2t_reference/make_shared_fixture.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
T2T_REAL=${T2T_REAL:-/tmp/t2t-real}
PY=$T2T_REAL/venv/bin/python
[ -x "$PY" ] || { echo "no T2T reference environment at $T2T_REAL (see ../shared/t2t-reference-env)"; exit 1; }
export CUDA_VISIBLE_DEVICES=
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=$ROOT/tests/fixtures/t2t_run_shared
PROBLEM=translate_enzh_shared_fixture
SET=transformer_base_v1
HPARAMS='num_hidden_layers=2,hidden_size=16,filter_size=32,num_heads=2,batch_size=256,max_length=48,learning_rate_warmup_steps=10'
THREADS=(--inter_op_parallelism_threads=1 --intra_op_parallelism_threads=1)
# Few steps: after 20 this post-norm model ends every sentence at once, and
# empty translations would check little.
STEPS=4

mkdir -p "$WORK/tmp"
cp "$ROOT"/data/sample/{train,dev}.{en,zh} "$WORK/tmp/"
"$PY" "$T2T_REAL/datagen.py" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --tmp_dir="$WORK/tmp"
"$T2T_REAL/venv/bin/t2t-trainer" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --model=transformer --hparams_set=$SET --hparams="$HPARAMS" \
  --output_dir="$WORK/train" --train_steps=$STEPS --schedule=train --save_checkpoints_steps=$STEPS \
  --keep_checkpoint_max=1 --random_seed=1 "${THREADS[@]}"
head -n 12 "$ROOT/data/sample/dev.en" > "$WORK/in.en"
for beam in 1 4; do
  "$T2T_REAL/venv/bin/t2t-decoder" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
    --data_dir="$WORK/data" --model=transformer --hparams_set=$SET --hparams="$HPARAMS" \
    --output_dir="$WORK/train" --decode_hparams="beam_size=$beam,alpha=0.6" \
    --decode_from_file="$WORK/in.en" --decode_to_file="$WORK/beam$beam.zh" "${THREADS[@]}"
done

rm -rf "$OUT"
mkdir -p "$OUT/train" "$OUT/data" "$OUT/decodes"
# The output directory as T2T wrote it, less its graph, events and .meta.
cp "$WORK"/train/{checkpoint,hparams.json,flags.txt,flags_t2t.txt} "$WORK"/train/model.ckpt-$STEPS.{index,data-*} "$OUT/train/"
# The vocabulary only: the tests decode, they read no shards.
cp "$WORK"/data/vocab.* "$OUT/data/"
cp "$WORK"/in.en "$WORK"/beam1.zh "$WORK"/beam4.zh "$OUT/decodes/"
du -sh "$OUT"
