#!/usr/bin/env bash
# Serving against offline decoding on the same model: sentences/s of
# t2t-serve answering one-sentence requests from t2t-bench-serve at several
# concurrencies (each client thread on its own keep-alive connection, opened
# before the clock starts, with one request in flight at a time), next to
# t2t-decoder translating the same file offline in batches of BATCH with the
# same threads, beam and alpha (its own "decoded N sentences in S s" rate,
# the best of PASSES runs: it reads, encodes, decodes and writes the text as
# a user's run does), and next to t2t-bench-decode's rate for the search
# alone (sources encoded beforehand, kernels warmed up). A server can only
# batch what is in flight at once: at concurrency 1 every batch is one
# sentence; at 64 its dynamic batching should bring it close to the offline
# rate. The server's figure also pays for HTTP, JSON and the text's
# encoding and decoding, and the client shares its cores.
#
# The model is transformer_tiny trained on the Tatoeba en-zh data (as
# bench/decode/vs_ctranslate2.sh MODEL=tatoeba), translating its dev.en.
# t2t-decoder's translations of SOURCE are the reference: each concurrency's
# answers are compared with them line by line. Every concurrency gets an
# untimed warm-up of WARMUP_REQUESTS requests first (oneDNN compiles a
# kernel per shape on first use). The client shares the cores with the
# server, as on a one-machine deployment; the table shows its CPU seconds,
# and the server's sentences per CPU-second (user + system from /proc,
# steadier than wall time on a shared machine). Then the server's peak RSS,
# whether it drained and exited 0 on SIGTERM, and the two targets:
# concurrency 64 at >= 0.8x offline and at >= 4x concurrency 1.
#
#   bench/serve/run.sh          # needs a built t2t, t2t-serve and t2t-bench-serve
#   RUN_DIR=/tmp/t2t_bench_vs_ct2-tatoeba/run DATA_DIR=/tmp/t2t_bench_vs_ct2-tatoeba/data \
#     bench/serve/run.sh        # a trained run instead of training one
# Environment: RUN_DIR and DATA_DIR (a trained run of translate_enzh_tatoeba),
# TATOEBA_DIR (../shared/data/tatoeba-enzh), TRAIN_STEPS (3000), SOURCE
# (TATOEBA_DIR/dev.en), THREADS (2), BEAM (4), BATCH (32: the offline batch
# and the server's --max_batch_size), MAX_BATCH_SIZE (BATCH), DELAY_MS (5:
# --max_batch_delay_ms), QUIET_MS (1: --batch_quiet_ms), CONCURRENCIES ("1 8 64"), SERVE_PASSES (3: passes
# over SOURCE at each concurrency; one pass at 64 lasts about a second, more
# give a steadier figure), REQUESTS_C1 (requests at concurrency 1, to
# shorten the slowest run; default as the others), WARMUP_REQUESTS (100),
# PASSES (3: offline timed passes), READY_TIMEOUT (180 s to load the model),
# MAX_SECONDS (600 per concurrency), STOP_TIMEOUT (60 s after SIGTERM), WORK
# (/tmp/t2t_bench_serve).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
TATOEBA_DIR=${TATOEBA_DIR:-$ROOT/../shared/data/tatoeba-enzh}
WORK=${WORK:-/tmp/t2t_bench_serve}
PROBLEM=translate_enzh_tatoeba
TRAIN_STEPS=${TRAIN_STEPS:-3000}
THREADS=${THREADS:-2}
BEAM=${BEAM:-4}
BATCH=${BATCH:-32}
MAX_BATCH_SIZE=${MAX_BATCH_SIZE:-$BATCH}
DELAY_MS=${DELAY_MS:-5}
QUIET_MS=${QUIET_MS:-1}
CONCURRENCIES=${CONCURRENCIES:-1 8 64}
REQUESTS_C1=${REQUESTS_C1:-}
SERVE_PASSES=${SERVE_PASSES:-3}
WARMUP_REQUESTS=${WARMUP_REQUESTS:-100}
PASSES=${PASSES:-3}
READY_TIMEOUT=${READY_TIMEOUT:-180}
MAX_SECONDS=${MAX_SECONDS:-600}
if [ -z "${RUN_DIR:-}" ] || [ -z "${SOURCE:-}" ]; then
  [ -f "$TATOEBA_DIR/train.en" ] && [ -f "$TATOEBA_DIR/dev.en" ] \
    || { echo "no Tatoeba data in $TATOEBA_DIR: set TATOEBA_DIR (or RUN_DIR, DATA_DIR and SOURCE)" >&2; exit 1; }
fi
SOURCE=${SOURCE:-$TATOEBA_DIR/dev.en}
[ -f "$SOURCE" ] || { echo "no SOURCE=$SOURCE" >&2; exit 1; }
bench_require "$BUILD/t2t-decoder" "$BUILD/t2t-bench-decode" "$BUILD/t2t-serve" "$BUILD/t2t-bench-serve"
command -v curl >/dev/null || { echo "no curl: apt-get install curl" >&2; exit 1; }
export OMP_WAIT_POLICY=PASSIVE
mkdir -p "$WORK"

if [ -z "${RUN_DIR:-}" ]; then
  DATA_DIR=$WORK/data RUN_DIR=$WORK/run
  bench_train_tiny "$PROBLEM" "$TATOEBA_DIR" "$TRAIN_STEPS" "$DATA_DIR" "$RUN_DIR" "$WORK"
fi
: "${DATA_DIR:?set DATA_DIR with RUN_DIR}"
MODEL_FLAGS=(--problem="$PROBLEM" --data_dir="$DATA_DIR" --output_dir="$RUN_DIR")
SEARCH="beam_size=$BEAM,alpha=0.6"

echo "offline: t2t-decoder (reference translations and rate), t2t-bench-decode (search alone)"
: >"$WORK/decoder_rates.txt"
for pass in $(seq "$PASSES"); do
  "$BUILD/t2t-decoder" "${MODEL_FLAGS[@]}" --model=transformer --threads="$THREADS" \
    --decode_hparams="$SEARCH,batch_size=$BATCH" \
    --decode_from_file="$SOURCE" --decode_to_file="$WORK/offline.zh" >"$WORK/decoder.log" 2>&1 \
    || { echo "t2t-decoder failed: see $WORK/decoder.log" >&2; exit 1; }
  sed -n 's/.*decoded [0-9]* sentences in .* s: \([0-9.]*\) sentences\/s.*/\1/p' "$WORK/decoder.log" \
    >>"$WORK/decoder_rates.txt"
done
"$BUILD/t2t-bench-decode" "${MODEL_FLAGS[@]}" --source="$SOURCE" --beam_size="$BEAM" \
  --batch_size="$BATCH" --passes="$PASSES" --warmup_batches=-1 --threads="$THREADS" \
  2>"$WORK/bench_decode.log" | tail -n 1 >"$WORK/offline.json"

# The server and the client run in the background, so that a signal to
# this script is handled at once (bash runs traps only between foreground
# commands); whatever ends the script ends them too.
SERVER_PID=""
CLIENT_PID=""
stop_children() {
  local pid
  for pid in "$CLIENT_PID" "$SERVER_PID"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
}
trap stop_children EXIT
trap 'exit 130' INT TERM

# t2t-bench-serve with these flags; returns its exit status.
bench_client() {
  "$BUILD/t2t-bench-serve" --url="$URL" --input="$SOURCE" --max_seconds="$MAX_SECONDS" "$@" &
  CLIENT_PID=$!
  local rc=0
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  return "$rc"
}

"$BUILD/t2t-serve" "${MODEL_FLAGS[@]}" --model=transformer --host=127.0.0.1 --port=0 \
  --threads="$THREADS" --decode_hparams="$SEARCH" --max_batch_size="$MAX_BATCH_SIZE" \
  --max_batch_delay_ms="$DELAY_MS" --batch_quiet_ms="$QUIET_MS" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!

# The OS picks the port (--port=0), so it is read from the log; the model
# may still be loading then, which GET /ready tells.
PORT=""
deadline=$((SECONDS + READY_TIMEOUT))
while :; do
  kill -0 "$SERVER_PID" 2>/dev/null \
    || { echo "t2t-serve exited before it was ready: see $WORK/serve.log" >&2; tail -n 5 "$WORK/serve.log" >&2; exit 1; }
  if [ -z "$PORT" ]; then
    PORT=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$WORK/serve.log" | head -n 1)
  fi
  if [ -n "$PORT" ] && curl -sf -o /dev/null "http://127.0.0.1:$PORT/ready"; then break; fi
  [ "$SECONDS" -lt "$deadline" ] \
    || { echo "t2t-serve not ready after ${READY_TIMEOUT}s: see $WORK/serve.log" >&2; exit 1; }
  sleep 0.2
done
URL=http://127.0.0.1:$PORT
echo "t2t-serve ready on $URL (pid $SERVER_PID)"

# User + system seconds of the server so far (fields 14 and 15 of
# /proc/PID/stat, in clock ticks).
TICKS=$(getconf CLK_TCK)
server_cpu() { awk -v t="$TICKS" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$SERVER_PID/stat"; }

# Sentences and batches the server has decoded so far, from its /metrics.
batches() {
  curl -sf "$URL/metrics" | awk '/^t2t_batch_sentences_(sum|count) / { printf "%s ", $2 }'
}

RESULTS=$WORK/results.jsonl
: >"$RESULTS"
FAILED=0
for c in $CONCURRENCIES; do
  requests=$((SERVE_PASSES * $(awk 'END { print NR }' "$SOURCE")))
  [ "$c" = 1 ] && [ -n "$REQUESTS_C1" ] && requests=$REQUESTS_C1
  bench_client --concurrency="$c" --requests="$WARMUP_REQUESTS" \
    >/dev/null 2>"$WORK/warmup-c$c.log" \
    || { echo "warm-up at concurrency $c failed:" >&2; cat "$WORK/warmup-c$c.log" >&2; FAILED=1; }
  cpu_before=$(server_cpu)
  batches_before=$(batches)
  rc=0
  bench_client --concurrency="$c" --requests="$requests" --output="$WORK/serve-c$c.zh" \
    >"$WORK/client-c$c.json" 2>"$WORK/client-c$c.log" || rc=$?
  cpu_after=$(server_cpu)
  batches_after=$(batches)
  if [ "$rc" != 0 ]; then
    echo "t2t-bench-serve at concurrency $c exited $rc:" >&2
    tail -n 3 "$WORK/client-c$c.log" >&2
    FAILED=1
  fi
  tail -n 1 "$WORK/client-c$c.json" | "$PYTHON" -c '
import json, sys
row = json.loads(sys.stdin.read())
row.update(exit_status=int(sys.argv[1]), server_cpu_seconds=float(sys.argv[2]) - float(sys.argv[3]),
           output=sys.argv[4])
before, after = sys.argv[5].split(), sys.argv[6].split()
if len(before) == 2 and len(after) == 2:
    batches = float(after[1]) - float(before[1])
    row["mean_batch"] = (float(after[0]) - float(before[0])) / batches if batches else 0
print(json.dumps(row))' "$rc" "$cpu_after" "$cpu_before" "$WORK/serve-c$c.zh" \
    "$batches_before" "$batches_after" >>"$RESULTS" \
    || { echo "no summary line from t2t-bench-serve at concurrency $c" >&2; FAILED=1; }
  echo "concurrency $c done"
done

# Peak RSS over the whole life of the server, read while it still runs.
PEAK_RSS_KB=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status")
# SIGTERM: the server should finish what is queued and exit 0 (within its
# --shutdown_timeout, 30 s); a hung one is killed after STOP_TIMEOUT. An
# exited child stays a zombie until waited for, so its state tells.
kill -TERM "$SERVER_PID"
deadline=$((SECONDS + ${STOP_TIMEOUT:-60}))
while [ "$(awk '{ print $3 }' "/proc/$SERVER_PID/stat" 2>/dev/null || echo Z)" != Z ]; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "t2t-serve still running ${STOP_TIMEOUT:-60}s after SIGTERM: killed" >&2
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    break
  fi
  sleep 0.2
done
SERVER_EXIT=0
wait "$SERVER_PID" || SERVER_EXIT=$?
SERVER_PID=""

"$PYTHON" "$ROOT/bench/serve/summarize.py" --results="$RESULTS" --offline="$WORK/offline.json" \
  --decoder_rates="$WORK/decoder_rates.txt" --quiet_ms="$QUIET_MS" \
  --reference="$WORK/offline.zh" --peak_rss_kb="$PEAK_RSS_KB" --server_exit="$SERVER_EXIT" \
  --threads="$THREADS" --beam="$BEAM" --batch="$BATCH" --max_batch_size="$MAX_BATCH_SIZE" \
  --delay_ms="$DELAY_MS"
[ "$FAILED" = 0 ] && [ "$SERVER_EXIT" = 0 ]
