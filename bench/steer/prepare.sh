#!/bin/bash
# What bench/steer/run.py measures: the Tatoeba recipe (README, "A real-data
# recipe") trained three times for a fixed number of steps, pinned to one
# core: seeds 1 and 2, and seed 1 again with guided alignment on eflomal's
# alignments. Each run's last three checkpoints are averaged into avg3/.
#   bench/steer/prepare.sh WORK CORPUS [STEPS]
# CORPUS holds train.{en,zh} and dev.{en,zh}; eflomal-align must be on PATH
# (pip install eflomal), and PYTHONPATH must reach the t2t package.
set -euo pipefail
W=$1; C=$2; STEPS=${3:-5000}
B=${T2T_BUILD_DIR:-build}
H=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W/logs"
P=translate_enzh_tatoeba
$B/t2t-datagen --problem=$P --data_dir="$W/data" --tmp_dir="$C"
python3 "$H/alignments.py" make --corpus "$C" --out "$W/align"
mkdir -p "$W/data-ga" && cp "$W"/data/vocab.* "$W/data-ga/"
$B/t2t-datagen --problem=$P --data_dir="$W/data-ga" --tmp_dir="$C" --train_alignments="$W/align/train.align"
precision=none
grep -qw 'avx512_bf16\|amx_bf16' /proc/cpuinfo && precision=bf16
train() {  # name seed data [hparams]
  taskset -c "${T2T_CORE:-1}" $B/t2t-trainer --problem=$P --model=transformer \
    --hparams_set=transformer_tiny --hparams_file="$H/../../configs/hparams/transformer_tiny_tatoeba.yaml" \
    --hparams="${4:-}" --data_dir="$W/$3" --output_dir="$W/runs/$1" --train_steps=$STEPS \
    --threads=1 --random_seed=$2 --local_eval_frequency=1000 --save_checkpoints_steps=500 \
    --keep_checkpoint_max=0 --mixed_precision=$precision > "$W/logs/$1.log" 2>&1
  $B/t2t-avg-all --model_dir="$W/runs/$1" --output_dir="$W/runs/$1/avg3" --n=3
}
train seed1 1 data
train seed2 2 data
train guided 1 data-ga guided_alignment_weight=1.0
