#!/usr/bin/env bash
# Makes tests/fixtures/t2t_run/ with real Tensor2Tensor 1.15.7: T2T's own
# datagen on t2t's bundled sample (problem translate_enzh_fixture, usr/),
# 20 steps of T2T's own trainer on a small transformer_tiny,
# t2t_expected.py's record of what T2T computes from that checkpoint, and
# T2T's own greedy and beam decodes of 12 sentences (beam.zh: only in the
# fixtures made since it was added). The equivalence and import tests
# (tests/tools/test_t2t_equivalence.cc, tests/tools/test_t2t_import.cc) read the
# result; they need no TensorFlow. (decodes/ of the committed fixture were made by
# that same decoder command on the committed checkpoint.)
#
#   T2T_REAL=/tmp/t2t-real ../shared/t2t-reference-env/setup.sh   # once
#   T2T_REAL=/tmp/t2t-real tests/t2t_reference/make_fixtures.sh
#
# The same for T2T's relative position attention, into
# tests/fixtures/t2t_run_relative (distances clipped at 6, so that the short
# sample sentences clip many), without data/: T2T's datagen makes the same
# vocabularies again (checked), and the tests read t2t_run's data directory:
#   T2T_REAL=/tmp/t2t-real SET=transformer_relative_tiny EXTRA=,max_relative_position=6 \
#     OUT=tests/fixtures/t2t_run_relative WITH_DATA=0 tests/t2t_reference/make_fixtures.sh
#
# The same for T2T's Evolved Transformer (MODEL=evolved_transformer), into
# tests/fixtures/t2t_run_evolved:
#   T2T_REAL=/tmp/t2t-real MODEL=evolved_transformer SET=evolved_transformer_tiny \
#     OUT=tests/fixtures/t2t_run_evolved WITH_DATA=0 tests/t2t_reference/make_fixtures.sh
#
# T2T shuffles shards without a seed and TensorFlow's initializers differ
# from run to run, so a new run gives other (equally valid) fixtures.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
T2T_REAL=${T2T_REAL:-/tmp/t2t-real}
PY=$T2T_REAL/venv/bin/python
[ -x "$PY" ] || { echo "no T2T reference environment at $T2T_REAL (see ../shared/t2t-reference-env)"; exit 1; }
export CUDA_VISIBLE_DEVICES=
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=$(realpath -m "${OUT:-$ROOT/tests/fixtures/t2t_run}")
SET=${SET:-transformer_tiny}
MODEL=${MODEL:-transformer}
PROBLEM=translate_enzh_fixture
HPARAMS="hidden_size=16,filter_size=32,num_heads=2,batch_size=256,max_length=48,learning_rate_warmup_steps=10${EXTRA:-}"

mkdir -p "$WORK/tmp"
cp "$ROOT"/data/sample/{train,dev}.{en,zh} "$WORK/tmp/"
"$PY" "$T2T_REAL/datagen.py" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --tmp_dir="$WORK/tmp"
"$T2T_REAL/venv/bin/t2t-trainer" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --model=$MODEL --hparams_set=$SET --hparams="$HPARAMS" \
  --output_dir="$WORK/train" --train_steps=20 --schedule=train --save_checkpoints_steps=20 \
  --keep_checkpoint_max=1 --random_seed=1 \
  --inter_op_parallelism_threads=1 --intra_op_parallelism_threads=1
mkdir -p "$WORK/expected"
"$PY" "$HERE/t2t_expected.py" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --output_dir="$WORK/train" --model=$MODEL --hparams_set=$SET \
  --hparams="$HPARAMS" --train_steps=20 --out="$WORK/expected/expected"

# T2T's own greedy decodes of a few dev sentences (20 steps do not make a
# translator: they show where t2t's decoding of the same checkpoint agrees).
head -n 12 "$ROOT/data/sample/dev.en" > "$WORK/in.en"
"$T2T_REAL/venv/bin/t2t-decoder" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --model=$MODEL --hparams_set=$SET \
  --output_dir="$WORK/train" --decode_hparams="beam_size=1" \
  --decode_from_file="$WORK/in.en" --decode_to_file="$WORK/greedy.zh" \
  --inter_op_parallelism_threads=1 --intra_op_parallelism_threads=1
# And by beam search (4 beams, alpha 0.6), as the README's recipe decodes.
"$T2T_REAL/venv/bin/t2t-decoder" --t2t_usr_dir="$HERE/usr" --problem=$PROBLEM \
  --data_dir="$WORK/data" --model=$MODEL --hparams_set=$SET \
  --output_dir="$WORK/train" --decode_hparams="beam_size=4,alpha=0.6" \
  --decode_from_file="$WORK/in.en" --decode_to_file="$WORK/beam.zh" \
  --inter_op_parallelism_threads=1 --intra_op_parallelism_threads=1

if [ "${WITH_DATA:-1}" = 0 ]; then
  for v in "$WORK"/data/vocab.*; do
    cmp -s "$v" "$ROOT/tests/fixtures/t2t_run/data/$(basename "$v")" ||
      { echo "$(basename "$v") differs from tests/fixtures/t2t_run's: keep data/ (WITH_DATA=1)"; exit 1; }
  done
fi
rm -rf "$OUT"
mkdir -p "$OUT/train" "$OUT/expected" "$OUT/decodes"
# The output directory as T2T wrote it, less its graph, events and .meta
# (large, and read by nothing here).
cp "$WORK"/train/{checkpoint,hparams.json,flags.txt,flags_t2t.txt} "$WORK"/train/model.ckpt-20.{index,data-*} "$OUT/train/"
if [ "${WITH_DATA:-1}" != 0 ]; then
  mkdir -p "$OUT/data" && cp "$WORK"/data/vocab.* "$WORK"/data/$PROBLEM-* "$OUT/data/"
fi
cp "$WORK"/expected/expected.* "$OUT/expected/"
cp "$WORK"/in.en "$WORK"/greedy.zh "$WORK"/beam.zh "$OUT/decodes/"
du -sh "$OUT"
