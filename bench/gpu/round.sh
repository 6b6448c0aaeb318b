#!/usr/bin/env bash
# One GPU round: everything a GPU session checks and measures, run in one go
# from a relocatable t2t tree (README, "Copying t2t to another machine"),
# writing a log and a JSON summary. Stages, in the order the GPU targets
# (bench/README.md) need them (a loan of GPU time may end before the last):
#
#   smi          nvidia-smi: the card, driver and memory
#   tests        every [cuda] test of the installed t2t_tests
#   bench_train  bench/train/run.sh, transformer_base bf16 at 4,096 tokens a
#                batch on CUDA against PyTorch eager and torch.compile, then
#                ours with --cuda_graphs (compared with the same reference
#                rows)
#   bench_train_32k  ours alone against the measured bf16 matmul peak at
#                32,768 tokens a batch: transformer_base, transformer_big
#   bench_decode bench/decode/run.sh on CUDA, beam 4 batch 64, bf16, bf16
#                with --cuda_graphs, then float32: the sample's tiny model
#                and an untrained transformer_base, against the PyTorch
#                reference with a key/value cache in the same type
#   decode       t2t-decoder on CUDA and on the CPU, same checkpoint and
#                sentences: how many translations are identical
#   profile_decode  (after bench_decode) per-operator times of bf16 decoding
#                on both sides, into decode_profile.txt
#   graphs       bf16 training of the sample with --cuda_graphs,
#                uninterrupted: how many graphs were captured, and its last
#                loss beside the eager run's
#   train        t2t-trainer --device=cuda, bf16 then fp16, on the bundled
#                sample: killed (-9) after its first checkpoint and resumed
#                by the same command to the end
#
# Each stage's outcome goes into the summary as it ends, so a round cut short
# still reports what it reached; the summary lists the stages not reached,
# and a later round runs just those:  bench/gpu/round.sh decode train
#
#   TREE=t2t-tree OUT=/tmp/round bench/gpu/round.sh [STAGE...]
# Environment: TREE (the installed tree; default t2t-tree), OUT (where the
# log and round.json go; default /tmp/t2t_round), T2T_PYTHON (the Python
# whose torch the tree runs on; default python3), BUDGET (seconds for the
# whole round, default 540: stages that would not fit are left for the next),
# STEPS (training steps of the train, graphs and decode stages; 300),
# ROUND_DEVICE (cuda; cpu runs train and decode on the CPU in float32 and
# skips the rest, to try the script itself where there is no GPU: a test
# of the installed tree does).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TREE=$(cd "${TREE:-t2t-tree}" && pwd) || { echo "no TREE=${TREE:-t2t-tree}" >&2; exit 2; }
OUT=${OUT:-/tmp/t2t_round}
BUDGET=${BUDGET:-540}
export T2T_PYTHON=${T2T_PYTHON:-python3}
# The tree's launchers find LibTorch through the same Python.
export T2T_TORCH_PYTHON=$T2T_PYTHON
# The benchmarks' run.sh take the virtualenv around it (bench/common.sh).
VENV=$(dirname "$(dirname "$(command -v "$T2T_PYTHON")")")
DEVICE=${ROUND_DEVICE:-cuda}
STEPS=${STEPS:-300}
PRECISIONS="bf16 fp16"
# bf16 autocast trains more than ten times slower than float32 on a CPU
# without bf16 instructions: the CPU try of the script keeps to float32.
[ "$DEVICE" = cpu ] && PRECISIONS="none"
mkdir -p "$OUT"
LOG="$OUT/round.log"
SUMMARY="$OUT/round.json"
WORK=$(mktemp -d /tmp/t2t_round.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
START=$SECONDS
ALL_STAGES=(smi tests bench_train bench_train_32k bench_decode decode profile_decode graphs train)
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=("${ALL_STAGES[@]}")
# What each stage needs at most, in seconds: one that would not fit in what
# is left of the budget is not started.
declare -A NEEDS=([smi]=10 [tests]=180 [bench_train]=270 [bench_train_32k]=150
                  [bench_decode]=240 [decode]=60 [profile_decode]=60 [graphs]=60 [train]=150)

log() { echo "[$(date +%T)] $*" | tee -a "$LOG"; }
# Adds "name": value (JSON) to the summary's stage entry.
RESULTS="$WORK/results.jsonl"
: > "$RESULTS"
record() { printf '{"stage": "%s", "key": "%s", "value": %s}\n' "$1" "$2" "$3" >> "$RESULTS"; }
write_summary() {
  "$T2T_PYTHON" - "$RESULTS" "$SUMMARY" "$ROOT" "${STAGES[*]}" <<'PY'
import json, subprocess, sys
results, summary, root, asked = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
stages = {}
for line in open(results):
    try:
        r = json.loads(line)
    except ValueError:
        # One bad figure (a stray line in a benchmark's output) must not
        # lose the rest of the summary: the raw line goes in instead.
        r = {"stage": "unparsed", "key": str(len(stages.get("unparsed", {}))), "value": line}
    stages.setdefault(r["stage"], {})[r["key"]] = r["value"]
try:
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
except OSError:
    commit = ""
done = [s for s in asked if stages.get(s, {}).get("status") in ("passed", "failed")]
out = {"commit": commit, "stages": stages, "not_reached": [s for s in asked if s not in done]}
json.dump(out, open(summary + ".tmp", "w"), indent=1)
import os; os.replace(summary + ".tmp", summary)
PY
}

T() { "$TREE/bin/$1" "${@:2}"; }

# A stage that needs a GPU is skipped (and passes) when ROUND_DEVICE=cpu.
on_gpu_only() {
  [ "$DEVICE" = cpu ] || return 1
  record "$1" skipped "\"needs a GPU; ROUND_DEVICE=cpu tries the rest of the script\""
}

stage_smi() {
  on_gpu_only smi && return 0
  nvidia-smi >> "$LOG" 2>&1 || return 1
  record smi card "\"$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)\""
  record smi memory_mib "$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n1)"
}

stage_tests() {
  local out="$WORK/tests.txt"
  T2T_TEST_SOURCE_DIR="$ROOT" "$TREE/tests/t2t_tests" "[cuda]" > "$out" 2>&1
  local rc=$?
  cat "$out" >> "$LOG"
  local line
  line=$(grep -E "^(All tests passed|test cases:)" "$out" | tail -n1)
  record tests result "\"$line\""
  grep -q "T2T_TEST_SKIPPED" "$out" && record tests skipped "\"$(grep -m1 -o 'T2T_TEST_SKIPPED: .*' "$out")\""
  return $rc
}

# The bundled sample, for train and decode: the tree's copy, which
# translate_enzh_sample reads too.
SAMPLE="$TREE/share/t2t/sample"
[ -f "$SAMPLE/dev.en" ] || SAMPLE="$ROOT/data/sample"
sample_data() {
  [ -d "$WORK/data" ] || T t2t-datagen --problem=translate_enzh_sample --data_dir="$WORK/data" \
    --tmp_dir="$WORK/tmp" >> "$LOG" 2>&1
}

train_flags() {
  echo "--problem=translate_enzh_sample --model=transformer --hparams_set=transformer_tiny" \
    "--data_dir=$WORK/data --output_dir=$1 --device=$DEVICE --mixed_precision=$2" \
    "--train_steps=$STEPS --save_checkpoints_steps=$((STEPS / 3)) --local_eval_frequency=$STEPS" \
    "--eval_steps=5"
}

stage_train() {
  sample_data || return 1
  local mp ok=0
  for mp in $PRECISIONS; do
    local run="$WORK/run_$mp"
    # shellcheck disable=SC2046
    T t2t-trainer $(train_flags "$run" "$mp") > "$WORK/train_$mp.log" 2>&1 &
    local pid=$! waited=0
    while [ ! -f "$run/model.ckpt-$((STEPS / 3)).pt" ] && kill -0 "$pid" 2>/dev/null && [ $waited -lt 120 ]; do
      sleep 0.5; waited=$((waited + 1))
    done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    cat "$WORK/train_$mp.log" >> "$LOG"
    # shellcheck disable=SC2046
    T t2t-trainer $(train_flags "$run" "$mp") > "$WORK/resume_$mp.log" 2>&1
    local rc=$?
    cat "$WORK/resume_$mp.log" >> "$LOG"
    local resumed=false
    grep -q "resum" "$WORK/resume_$mp.log" && [ -f "$run/model.ckpt-$STEPS.pt" ] && [ $rc -eq 0 ] &&
      resumed=true
    record train "${mp}_resumed_to_$STEPS" "$resumed"
    record train "${mp}_last_line" "\"$(grep -E "\] step $STEPS: loss" "$WORK/resume_$mp.log" | tail -n1 | sed 's/"/\\"/g')\""
    [ "$resumed" = true ] || ok=1
  done
  return $ok
}

stage_graphs() {
  on_gpu_only graphs && return 0
  sample_data || return 1
  local run="$WORK/run_graphs"
  # shellcheck disable=SC2046
  T t2t-trainer $(train_flags "$run" bf16) --cuda_graphs > "$WORK/graphs.log" 2>&1
  local rc=$?
  cat "$WORK/graphs.log" >> "$LOG"
  record graphs exit_status "$rc"
  record graphs captured "\"$(grep -o 'CUDA graphs: [0-9]* captured, for [0-9]* batch shapes' "$WORK/graphs.log" | tail -n1)\""
  record graphs last_line "\"$(grep -E "\] step $STEPS: loss" "$WORK/graphs.log" | tail -n1 | sed 's/"/\\"/g')\""
  [ $rc -eq 0 ] && [ -f "$run/model.ckpt-$STEPS.pt" ]
}

stage_decode() {
  sample_data || return 1
  # The train stage's bf16 run when it ran first, else one of its own (the
  # train stage must find no checkpoint of its run to resume from).
  local run="$WORK/run_bf16"
  if [ ! -f "$run/model.ckpt-$STEPS.pt" ]; then
    run="$WORK/run_decode"
    # shellcheck disable=SC2046
    T t2t-trainer $(train_flags "$run" none) >> "$LOG" 2>&1 || return 1
  fi
  local dev
  for dev in $(printf '%s\n' "$DEVICE" cpu | sort -u); do
    local t0=$SECONDS
    T t2t-decoder --problem=translate_enzh_sample --model=transformer \
      --hparams_set=transformer_tiny --data_dir="$WORK/data" --output_dir="$run" --device="$dev" \
      --decode_hparams=beam_size=4,alpha=0.6,batch_size=64 \
      --decode_from_file="$SAMPLE/dev.en" --decode_to_file="$WORK/dev.$dev.zh" >> "$LOG" 2>&1 || return 1
    record decode "${dev}_seconds" $((SECONDS - t0))
  done
  local same total
  total=$(wc -l < "$WORK/dev.cpu.zh")
  same=$(paste -d '\t' "$WORK/dev.$DEVICE.zh" "$WORK/dev.cpu.zh" | awk -F '\t' '$1 == $2' | wc -l)
  record decode identical "$same"
  record decode sentences "$total"
  [ "$total" -gt 0 ] && [ $((same * 100)) -ge $((total * 99)) ]
}

# One bench/train/run.sh: NAME SET PRECISION CUDA_GRAPHS HPARAMS REFERENCE
# STAGE (REFERENCE=1 runs eager and torch.compile beside ours; the figures
# go under STAGE in the summary).
bench_train_run() {
  T2T_BUILD_DIR="$TREE/bin" T2T_VENV="$VENV" CUDA_GRAPHS=$4 DEVICE=cuda MIXED_PRECISION=$3 \
    HPARAMS=$5 SETS=$2 RUNS=1 COMPILE=$6 REFERENCE=$6 WORK="$WORK/bench_$1" \
    bash "$ROOT/bench/train/run.sh" > "$WORK/$1.txt" 2>&1
  local rc=$?
  cat "$WORK/$1.txt" >> "$LOG"
  [ -f "$WORK/bench_$1/results.jsonl" ] &&
    record "$7" "$1" "[$(paste -sd, "$WORK/bench_$1/results.jsonl")]"
  return $rc
}

# The 4,096-token targets: ours against eager and torch.compile (both
# measured once, here), then ours with CUDA graphs against the same rows.
stage_bench_train() {
  on_gpu_only bench_train && return 0
  local rc=0
  bench_train_run base_bf16 base bf16 0 "" 1 bench_train || rc=1
  bench_train_run base_bf16_graphs base bf16 1 "" 0 bench_train || rc=1
  return $rc
}

# The share of the bf16 matmul peak at 32,768 tokens a batch: ours alone.
stage_bench_train_32k() {
  on_gpu_only bench_train_32k && return 0
  local rc=0
  bench_train_run base_bf16_32k base bf16 0 batch_size=32768 0 bench_train_32k || rc=1
  bench_train_run big_bf16_32k big bf16 0 batch_size=32768 0 bench_train_32k || rc=1
  return $rc
}

stage_bench_decode() {
  on_gpu_only bench_decode && return 0
  local rc=0 q
  for q in bf16 bf16+graphs none; do
    T2T_BUILD_DIR="$TREE/bin" T2T_VENV="$VENV" CUDA_GRAPHS=$([ "$q" = bf16+graphs ] && echo 1 || echo 0) \
      DEVICE=cuda QUANTIZE=${q%+graphs} RUNS=1 CONFIGS="4x64" PASSES=1 TRAIN_STEPS=$STEPS \
      UNTRAINED=transformer_base WORK="$WORK/bench_decode" \
      bash "$ROOT/bench/decode/run.sh" > "$WORK/bench_decode_$q.txt" 2>&1 || rc=1
    cat "$WORK/bench_decode_$q.txt" >> "$LOG"
    [ -f "$WORK/bench_decode/results.jsonl" ] &&
      record bench_decode "$q" "[$(paste -sd, "$WORK/bench_decode/results.jsonl")]"
  done
  return $rc
}

# Where bf16 decoding spends its time, on both sides: per-operator CPU self
# times of the timed pass (launch costs and per-shape set-up show there), on
# the model and sentences bench_decode trained and exported.
stage_profile_decode() {
  on_gpu_only profile_decode && return 0
  local d="$WORK/bench_decode"
  [ -d "$d/train" ] && [ -d "$d/export-trained" ] || { log "profile_decode needs bench_decode first"; return 1; }
  local common=(--beam_size=4 --batch_size=64 --extra_length=100 --passes=1 --device=cuda)
  T t2t-bench-decode --output_dir="$d/train" --data_dir="$d/data" --problem=translate_enzh_sample \
    --source="$ROOT/data/sample/dev.en" "${common[@]}" --quantize=bf16 \
    --profile="$WORK/decode_t2t.json" >> "$LOG" 2>&1 || return 1
  "$T2T_PYTHON" "$ROOT/bench/decode/reference_decode.py" --export_dir="$d/export-trained" \
    "${common[@]}" --dtype=bfloat16 --profile="$WORK/decode_pytorch.json" >> "$LOG" 2>&1 || return 1
  "$T2T_PYTHON" "$ROOT/bench/train/profile_table.py" "$WORK/decode_t2t.json" \
    "$WORK/decode_pytorch.json" --top 40 > "$OUT/decode_profile.txt" 2>&1
}

log "round at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), tree $TREE, stages: ${STAGES[*]}"
for stage in "${STAGES[@]}"; do
  if [ -z "${NEEDS[$stage]:-}" ]; then
    log "unknown stage '$stage' (stages: ${ALL_STAGES[*]})"; exit 2
  fi
  left=$((BUDGET - (SECONDS - START)))
  if [ "$left" -lt "${NEEDS[$stage]}" ]; then
    log "$stage: not started, ${left}s left of the budget and it needs up to ${NEEDS[$stage]}s"
    continue
  fi
  log "== $stage"
  t0=$SECONDS
  if "stage_$stage"; then status=passed; else status=failed; fi
  record "$stage" status "\"$status\""
  record "$stage" seconds $((SECONDS - t0))
  log "$stage: $status in $((SECONDS - t0))s"
  write_summary
done
write_summary
log "summary: $SUMMARY"
cat "$SUMMARY"
