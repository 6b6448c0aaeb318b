#!/usr/bin/env bash
# Decoding benchmark: a transformer_tiny trained on the bundled sample
# decodes the sample's held-back dev sources (data/sample/dev.en) through
# t2t's real beam search (t2t-bench-decode) and, as the reference, through
# plain PyTorch in Python with a key/value cache (reference_decode.py): the
# same weights (exported by t2t-bench-decode), the same source ids, batched
# the same way, the same search. Beam 1 (greedy) and 4 at batch 1 and 32;
# each side runs RUNS times, alternating, one process per configuration and
# run; the table shows medians, ours / PyTorch and how many sentences got
# the same output ids on both sides (from the first run).
#
# The reference preloads tcmalloc (or jemalloc) when installed; ours runs as
# t2t's binaries run (linked with tcmalloc when the build found it; if not,
# once more with the allocator preloaded, row "t2t+tcmalloc_minimal").
#
#   bench/decode/run.sh          # needs a built t2t (./tools/test.sh)
# Environment: RUNS (3), THREADS (0: all cores), CONFIGS ("1x1 1x32 4x1 4x32",
# beam x batch), PASSES (timed passes over the sources per process; default
# 5 at batch >= 8, else 1, so that each timing lasts a second or more), T2T_BUILD_DIR (build), T2T_VENV (the virtualenv with torch,
# as tools/setup.sh), WORK (/tmp/t2t_bench_decode), RUN_DIR (a trained run of
# translate_enzh_sample to use instead of training one; DATA_DIR its data),
# TRAIN_STEPS (1000), UNTRAINED (e.g. transformer_small: also decode with an
# untrained model of that set, synthetic inputs, every sentence running to
# its decode length; EXTRA_LENGTH for it, 30), DEVICE (cpu; cuda or cuda:N
# decodes on a GPU on both sides, one batch at a time, and leaves out the
# preloaded-allocator row), QUANTIZE (none; bf16: ours --quantize=bf16, the
# reference --dtype=bfloat16; int8: ours only), CUDA_GRAPHS (0; 1: ours
# with --cuda_graphs, each decoding step replayed as a CUDA graph, after an
# untimed pass over the sources in which each step shape was captured once:
# a one-time cost of the process, as a compilation).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
WORK=${WORK:-/tmp/t2t_bench_decode}
RUNS=${RUNS:-3}
THREADS=${THREADS:-0}
CONFIGS=${CONFIGS:-1x1 1x32 4x1 4x32}
BENCH="$BUILD/t2t-bench-decode"
bench_require "$BENCH" "$BUILD/t2t-datagen" "$BUILD/t2t-trainer"

DEVICE=${DEVICE:-cpu}
PRELOAD_ROW=$ALLOCATOR
ldd "$BENCH" 2>/dev/null | grep -q tcmalloc && PRELOAD_ROW=""
case $DEVICE in cuda*) PRELOAD_ROW="" ;; esac

mkdir -p "$WORK/ids"
PROBLEM=translate_enzh_sample
if [ -z "${RUN_DIR:-}" ]; then
  DATA_DIR="$WORK/data"
  RUN_DIR="$WORK/train"
  "$BUILD/t2t-datagen" --problem=$PROBLEM --data_dir="$DATA_DIR" --tmp_dir="$WORK/tmp" \
    --log_level=warning
  # Resumes, or returns at once, when the run already has its steps.
  "$BUILD/t2t-trainer" --problem=$PROBLEM --model=transformer --hparams_set=transformer_tiny \
    --hparams_file="$ROOT/configs/hparams/transformer_tiny_cpu.yaml" --data_dir="$DATA_DIR" \
    --output_dir="$RUN_DIR" --train_steps="${TRAIN_STEPS:-1000}" --schedule=train \
    --random_seed=1 --log_level=warning
fi
: "${DATA_DIR:?set DATA_DIR to the data directory of RUN_DIR}"

# name|arguments selecting the model and its sources|extra_length
MODELS=("trained|--output_dir=$RUN_DIR --data_dir=$DATA_DIR --problem=$PROBLEM --source=$ROOT/data/sample/dev.en|100")
if [ -n "${UNTRAINED:-}" ]; then
  MODELS+=("untrained|--hparams_set=$UNTRAINED --vocab=8000 --max_sentences=64|${EXTRA_LENGTH:-30}")
fi
for m in "${MODELS[@]}"; do
  IFS='|' read -r name model_args _ <<<"$m"
  # shellcheck disable=SC2086
  "$BENCH" $model_args --export_dir="$WORK/export-$name"
done

RESULTS="$WORK/results.jsonl"
: > "$RESULTS"
echo "== $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for run in $(seq "$RUNS"); do
  for m in "${MODELS[@]}"; do
    IFS='|' read -r name model_args extra <<<"$m"
    for config in $CONFIGS; do
      beam=${config%x*} batch=${config#*x}
      passes=${PASSES:-$([ "$batch" -ge 8 ] && echo 5 || echo 1)}
      common=(--beam_size="$beam" --batch_size="$batch" --extra_length="$extra" --threads="$THREADS"
              --passes="$passes" --device="$DEVICE")
      ours_flags=(--quantize="${QUANTIZE:-none}")
      [ "${CUDA_GRAPHS:-0}" = 1 ] && ours_flags+=(--cuda_graphs --warmup_batches=-1)
      ref_flags=()
      [ "${QUANTIZE:-none}" = bf16 ] && ref_flags=(--dtype=bfloat16)
      ids() {
        local model
        model=$(tail -n 1 "$RESULTS" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["model"])')
        [ "$run" = 1 ] && mv "$WORK/ids/last" "$WORK/ids/$1-${model//\//_}-beam$beam-batch$batch.ids"
        rm -f "$WORK/ids/last"
      }
      # shellcheck disable=SC2086
      "$BENCH" $model_args "${common[@]}" "${ours_flags[@]}" --write_ids="$WORK/ids/last" >> "$RESULTS"
      ids t2t
      if [ -n "$PRELOAD_ROW" ]; then
        # shellcheck disable=SC2086
        LD_PRELOAD=$PRELOAD_ROW "$BENCH" $model_args "${common[@]}" "${ours_flags[@]}" >> "$RESULTS"
      fi
      "$PYTHON" "$ROOT/bench/decode/reference_decode.py" --export_dir="$WORK/export-$name" \
        "${common[@]}" "${ref_flags[@]}" --write_ids="$WORK/ids/last" >> "$RESULTS"
      ids pytorch
      echo "run $run/$RUNS $name beam $beam batch $batch: $(tail -n "$((2 + (${#PRELOAD_ROW} > 0 ? 1 : 0)))" "$RESULTS" \
        | "$PYTHON" -c 'import json,sys; print(", ".join("%s%s %.1f sentences/s" % (r["side"], "+" + r["preload"] if r["side"] == "t2t" and r["preload"] else "", r["sentences_per_s"]) for r in map(json.loads, sys.stdin)))')"
    done
  done
done
echo
"$PYTHON" "$ROOT/bench/decode/summarize.py" "$RESULTS" "$WORK/ids"
