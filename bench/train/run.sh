#!/usr/bin/env bash
# Training benchmark: transformer_tiny, _small and _base trained through
# t2t's real TrainStep (t2t-bench-train) and, as the reference, the same
# model in plain PyTorch eager (reference_train.py) on the same synthetic
# batches, step count and threads. Each side runs RUNS times, alternating,
# one process per set and run; the table shows medians.
#
# The reference preloads tcmalloc (or jemalloc) when installed, as PyTorch
# recommends on CPU; ours runs as t2t's binaries run, and once more with the
# same allocator preloaded (row "t2t+tcmalloc_minimal") to show what that
# is worth to ours.
#
# On a GPU (DEVICE=cuda) both sides keep model and batches on the device
# and synchronize it before reading the clock; the reference uses the fused
# CUDA Adam and torch.autocast (+ GradScaler for fp16). Each set then runs
# 8 warm-up + 200 timed steps (a step takes milliseconds there), and the
# preloaded-allocator row is left out: ours links tcmalloc already, and the
# host allocator does not hold the GPU's tensors.
#
#   bench/train/run.sh            # needs a built t2t-bench-train (./tools/test.sh)
#   DEVICE=cuda MIXED_PRECISION=bf16 bench/train/run.sh
# Environment: SETS (tiny small base; big is transformer_big), RUNS (3), THREADS (0: all cores),
# DEVICE (cpu; or cuda, cuda:N), MIXED_PRECISION (none; or bf16, fp16 on CUDA
# only), both passed to both sides as --device / --mixed_precision,
# T2T_BUILD_DIR (build), T2T_VENV (the virtualenv with torch, as tools/setup.sh),
# COMPILE=1 adds torch.compile as an extra, informational column,
# REFERENCE=0 runs ours alone (a figure against the matmul peak, or a row
# compared with the reference rows of another run of the same round),
# HPARAMS (overrides for ours, e.g. batch_size=32768; the reference takes the
# resulting config from ours), CUDA_GRAPHS=1 (ours with --cuda_graphs: each
# batch shape's step captured in its warm-up and replayed),
# WORK (/tmp/t2t_bench_train).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
WORK=${WORK:-/tmp/t2t_bench_train}
RUNS=${RUNS:-3}
THREADS=${THREADS:-0}
SETS=${SETS:-tiny small base}
DEVICE=${DEVICE:-cpu}
MIXED_PRECISION=${MIXED_PRECISION:-none}
BENCH="$BUILD/t2t-bench-train"
bench_require "$BENCH"

# Steps per set: enough timed steps for a stable figure (a multiple of the
# 4 batch shapes), warm-up covering the shapes where it is affordable.
steps() {
  case $DEVICE in cuda*) echo "--warmup_steps=8 --steps=200"; return ;; esac
  case $1 in
    tiny) echo "--warmup_steps=4 --steps=24" ;;
    small) echo "--warmup_steps=4 --steps=12" ;;
    base) echo "--warmup_steps=1 --steps=3" ;;
    *) echo "--warmup_steps=2 --steps=4" ;;
  esac
}

# On a GPU the preloaded row of ours is left out (see the top).
case $DEVICE in cuda*) OURS_PRELOADED="" ;; *) OURS_PRELOADED=$ALLOCATOR ;; esac
DEVICE_FLAGS=(--device="$DEVICE" --mixed_precision="$MIXED_PRECISION")
OURS_FLAGS=(--hparams="${HPARAMS:-}")
[ "${CUDA_GRAPHS:-0}" = 1 ] && OURS_FLAGS+=(--cuda_graphs)

mkdir -p "$WORK"
RESULTS="$WORK/results.jsonl"
: > "$RESULTS"
echo "== $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
case $DEVICE in
  cuda*) echo "== $DEVICE, mixed precision $MIXED_PRECISION: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)" ;;
esac
REFERENCE=${REFERENCE:-1}
[ "$REFERENCE" = 1 ] || COMPILE=0
sides=$((1 + REFERENCE + ${COMPILE:-0} + (${#OURS_PRELOADED} > 0 ? 1 : 0)))
for run in $(seq "$RUNS"); do
  for s in $SETS; do
    set_name=transformer_$s
    # shellcheck disable=SC2046
    ours=$("$BENCH" --hparams_set="$set_name" --threads="$THREADS" "${DEVICE_FLAGS[@]}" \
      "${OURS_FLAGS[@]}" $(steps "$s"))
    echo "$ours" >> "$RESULTS"
    if [ -n "$OURS_PRELOADED" ]; then
      # shellcheck disable=SC2046
      LD_PRELOAD=$OURS_PRELOADED "$BENCH" --hparams_set="$set_name" --threads="$THREADS" \
        "${DEVICE_FLAGS[@]}" "${OURS_FLAGS[@]}" $(steps "$s") >> "$RESULTS"
    fi
    config=$("$PYTHON" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["config"]))' "$ours")
    if [ "$REFERENCE" = 1 ]; then
      # shellcheck disable=SC2046
      "$PYTHON" "$ROOT/bench/train/reference_train.py" --hparams_set="$set_name" \
        --threads="$THREADS" "${DEVICE_FLAGS[@]}" --config="$config" $(steps "$s") >> "$RESULTS"
    fi
    if [ "${COMPILE:-0}" = 1 ]; then
      # shellcheck disable=SC2046
      "$PYTHON" "$ROOT/bench/train/reference_train.py" --hparams_set="$set_name" --compile \
        --threads="$THREADS" "${DEVICE_FLAGS[@]}" --config="$config" $(steps "$s") >> "$RESULTS" \
        || echo "torch.compile failed for $set_name" >&2
    fi
    echo "run $run/$RUNS $s: $(grep -F "\"$set_name\"" "$RESULTS" | tail -n "$sides" \
      | "$PYTHON" -c 'import json,sys; print(", ".join("%s%s %.0f tok/s" % (r["side"], "+" + r["preload"] if r["side"] == "t2t" and r["preload"] else "", r["target_tokens_per_s"]) for r in map(json.loads, sys.stdin)))')"
  done
done
echo
"$PYTHON" "$ROOT/bench/train/summarize.py" "$RESULTS"
