# Sourced by the benchmarks' run.sh: where the build and the torch
# virtualenv are, and the allocator the PyTorch references preload.
#   bench_require BIN...   exits with a hint when a binary is not built
#   bench_train ...        a trained model of any hparams set (see below)
#   bench_train_tiny ...   a trained transformer_tiny, shards made first
# Sets ROOT, BUILD, T2T_CACHE, PYTHON and ALLOCATOR (empty when neither
# tcmalloc nor jemalloc is installed).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${T2T_BUILD_DIR:-$ROOT/build}
T2T_CACHE=${T2T_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/t2t}
PYTHON=${T2T_VENV:-$T2T_CACHE/venv}/bin/python

# Trains HPARAMS_SET on PROBLEM's shards in DATA_DIR for STEPS steps into
# RUN_DIR (seed 1, FLAGS added), its log in LOG_DIR/train.log, unless RUN_DIR
# already holds a checkpoint; a failure prints the log's end and exits.
#   bench_train PROBLEM HPARAMS_SET STEPS DATA_DIR RUN_DIR LOG_DIR [FLAGS...]
bench_train() {
  local problem=$1 set=$2 steps=$3 data_dir=$4 run_dir=$5 logs=$6
  shift 6
  [ -f "$run_dir/checkpoint" ] && return 0
  bench_require "$BUILD/t2t-trainer"
  echo "training $set on $problem for $steps steps into $run_dir"
  "$BUILD/t2t-trainer" --problem="$problem" --model=transformer --hparams_set="$set" "$@" \
    --data_dir="$data_dir" --output_dir="$run_dir" --train_steps="$steps" \
    --local_eval_frequency="$steps" --eval_steps=2 --random_seed=1 >"$logs/train.log" 2>&1 \
    || { tail -n 20 "$logs/train.log" >&2; exit 1; }
}

# Trains transformer_tiny on PROBLEM (raw data from TMP_DIR) for STEPS steps
# into RUN_DIR, its shards in DATA_DIR and the logs in LOG_DIR, unless
# RUN_DIR already holds a checkpoint: the trained model the decoding and
# serving benchmarks measure.
#   bench_train_tiny PROBLEM TMP_DIR STEPS DATA_DIR RUN_DIR LOG_DIR
bench_train_tiny() {
  local problem=$1 tmp_dir=$2 steps=$3 data_dir=$4 run_dir=$5 logs=$6
  [ -f "$run_dir/checkpoint" ] && return 0
  bench_require "$BUILD/t2t-datagen"
  "$BUILD/t2t-datagen" --problem="$problem" --data_dir="$data_dir" --tmp_dir="$tmp_dir" \
    >"$logs/datagen.log" 2>&1
  bench_train "$problem" transformer_tiny "$steps" "$data_dir" "$run_dir" "$logs" \
    --hparams_file="$ROOT/configs/hparams/transformer_tiny_cpu.yaml"
}

bench_require() {
  local bin
  for bin in "$@"; do
    [ -x "$bin" ] || { echo "no $bin: build t2t first (./tools/test.sh)" >&2; exit 1; }
  done
  [ -x "$PYTHON" ] || { echo "no $PYTHON: run tools/setup.sh for the torch virtualenv" >&2; exit 1; }
}

# PyTorch recommends tcmalloc or jemalloc on the CPU, so its side runs with
# one preloaded, as it would at its best.
ALLOCATOR=""
for lib in libtcmalloc_minimal.so.4 libtcmalloc.so.4 libjemalloc.so.2; do
  path=$(ldconfig -p | grep -m1 -F "$lib " | sed 's/.*=> //') || true
  [ -n "$path" ] && { ALLOCATOR=$path; break; }
done
[ -n "$ALLOCATOR" ] || echo "no tcmalloc/jemalloc installed (apt-get install libtcmalloc-minimal4): both sides use glibc malloc"
