#!/usr/bin/env bash
# More data than you have, on the Tatoeba en-zh pairs (README: "Back-translation",
# "Mixing", "Distillation"):
#   Back-translation. The training pairs are split in two: the first half is
#   the "parallel" data, of the second half only the Chinese side is kept as
#   "monolingual". Trained for STEPS steps each (transformer_tiny, the
#   README recipe's hparams), then dev BLEU (last checkpoint, beam 4, alpha
#   0.6, sacreBLEU tok zh):
#     (a) half      the parallel half alone
#     rev           the parallel half zh->en (enzh_half_rev): the reverse model
#     (b) bt_*      the parallel half mixed 1:1 with the reverse model's
#                   translations of the monolingual half: by beam (beam 4) or
#                   by sampling (Edunov et al.: the full distribution), plain or
#                   tagged with <BT> (Caswell et al.); and tagged beam with the
#                   real pairs weighted 2:1 (bt_beam_tagged_w2)
#     (c) all       every pair
#   Distillation. A transformer_small teacher trained TEACHER_STEPS steps on
#   every pair (TEACHER_HPARAMS over the recipe's hparams; default: 1,600
#   warm-up steps) translates every training source (beam 4); a
#   transformer_tiny student trained STEPS steps on those translations is
#   compared with (c), the same student on the references, and with one on
#   the references and the teacher's translations mixed 1:1.
# Each run trains on THREADS threads, one after another; a phase whose result
# exists is skipped, so a second call fills in what is missing (copy this
# script elsewhere to run it while editing the tree: bash reads a script as
# it goes).
# PARTS picks the experiments: "bt distill" (the default), "bt" or "distill"
# ((c), every pair, is trained for either: both compare with it).
#   bench/more_data/run.sh       # STEPS=2000 TEACHER_STEPS=4000 THREADS=2 WORK=/tmp/t2t_more_data PARTS="bt distill"
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
TATOEBA=${TATOEBA:-$ROOT/../shared/data/tatoeba-enzh}
WORK=${WORK:-/tmp/t2t_more_data}
STEPS=${STEPS:-2000}
TEACHER_STEPS=${TEACHER_STEPS:-4000}
THREADS=${THREADS:-2}
TEACHER_HPARAMS=${TEACHER_HPARAMS:-learning_rate_warmup_steps=1600}
PARTS=${PARTS:-bt distill}
wants() { [[ " $PARTS " == *" $1 "* ]]; }
for part in $PARTS; do
  case $part in bt | distill) ;; *) echo "PARTS: unknown experiment '$part' (bt, distill)" >&2; exit 1 ;; esac
done
[ -f "$TATOEBA/train.en" ] || { echo "no Tatoeba data at $TATOEBA (TATOEBA=...)" >&2; exit 1; }
bench_require "$BUILD/t2t-datagen" "$BUILD/t2t-trainer" "$BUILD/t2t-decoder" "$BUILD/t2t-bleu"
mkdir -p "$WORK/corpus" "$WORK/usr" "$WORK/logs"
C=$WORK/corpus
RESULTS=$WORK/results.tsv
[ -f "$RESULTS" ] || printf 'what\tseconds\tdetail\n' >"$RESULTS"
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"; }

# The corpus split: the first half parallel, the second half's Chinese alone.
if [ ! -f "$C/mono.zh" ]; then
  n=$(wc -l <"$TATOEBA/train.en")
  half=$((n / 2))
  head -n "$half" "$TATOEBA/train.en" >"$C/half.en"
  head -n "$half" "$TATOEBA/train.zh" >"$C/half.zh"
  tail -n +"$((half + 1))" "$TATOEBA/train.zh" >"$C/mono.zh.tmp" && mv "$C/mono.zh.tmp" "$C/mono.zh"
fi
cp -f "$TATOEBA/train.en" "$C/all.en"
cp -f "$TATOEBA/train.zh" "$C/all.zh"

# problem NAME TRAIN_YAML_LINES...: a YAML problem over the corpus, the
# Tatoeba dev set, 8k SentencePiece per language.
problem() {
  local name=$1
  shift
  {
    echo "name: $name"
    echo "source_language: en"
    echo "target_language: zh"
    printf '%s\n' "$@"
    echo "dev: {source: $TATOEBA/dev.en, target: $TATOEBA/dev.zh}"
    echo "vocab: {type: sentencepiece, size: 8000, separate: true}"
    echo "shards: {train: 4, dev: 1}"
  } >"$WORK/usr/$name.yaml"
}

datagen() {  # datagen PROBLEM
  [ -f "$WORK/data/$1/.done" ] && return 0
  "$BUILD/t2t-datagen" --t2t_usr_dir="$WORK/usr" --problem="$1" --data_dir="$WORK/data/$1" \
    >"$WORK/logs/datagen-$1.log" 2>&1 || { tail -20 "$WORK/logs/datagen-$1.log" >&2; exit 1; }
  touch "$WORK/data/$1/.done"
}

train() {  # train NAME PROBLEM DATA SET STEPS [TRAINER_FLAGS...]
  local name=$1 problem=$2 data=$3 set=$4 steps=$5
  shift 5
  # Done once the last step's checkpoint is there; a run stopped before
  # goes on from its newest checkpoint.
  [ -f "$WORK/runs/$name/model.ckpt-$steps.pt" ] && return 0
  echo "$(date +%T) training $name: $set on $problem for $steps steps"
  local start=$SECONDS
  "$BUILD/t2t-trainer" --t2t_usr_dir="$WORK/usr" --problem="$problem" --model=transformer \
    --hparams_set="$set" --hparams_file="$ROOT/configs/hparams/transformer_tiny_tatoeba.yaml" \
    --data_dir="$WORK/data/$data" --output_dir="$WORK/runs/$name" --train_steps="$steps" \
    --schedule=train --save_checkpoints_steps=500 --random_seed=1 --threads="$THREADS" "$@" \
    >"$WORK/logs/train-$name.log" 2>&1 || { tail -20 "$WORK/logs/train-$name.log" >&2; exit 1; }
  # The trainer's own rate, the median of its log lines: a run paused or
  # sharing the CPU for a while does not move it much.
  local rate
  rate=$(grep -o '[0-9.]* steps/s' "$WORK/logs/train-$name.log" | awk '{print $1}' | sort -n |
    awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "?"}')
  record "train $name" "$((SECONDS - start))" "$steps steps, median $rate steps/s"
}

# decode NAME PROBLEM DATA INPUT OUTPUT DECODE_FLAGS...: in pieces, timed.
decode() {
  local name=$1 problem=$2 data=$3 input=$4 output=$5
  shift 5
  [ -f "$output" ] && return 0
  echo "$(date +%T) decoding $input with $name into $output"
  local start=$SECONDS
  "$BUILD/t2t-decoder" --t2t_usr_dir="$WORK/usr" --problem="$problem" --model=transformer \
    --hparams_set="$(cat "$WORK/runs/$name.set")" --data_dir="$WORK/data/$data" \
    --output_dir="$WORK/runs/$name" --decode_from_file="$input" --decode_to_file="$output" \
    --decode_piece_lines=2000 "$@" >"$WORK/logs/decode-$(basename "$output").log" 2>&1 \
    || { tail -20 "$WORK/logs/decode-$(basename "$output").log" >&2; exit 1; }
  local secs=$((SECONDS - start)) lines
  lines=$(wc -l <"$input")
  record "decode $(basename "$output")" "$secs" \
    "$(awk -v n="$lines" -v t="$secs" 'BEGIN{printf "%d sentences, %.1f sentences/s", n, n/t}')"
}

bleu() {  # bleu NAME PROBLEM DATA: the dev set, beam 4, alpha 0.6
  local name=$1 problem=$2 data=$3 out=$WORK/dev/$1.zh
  mkdir -p "$WORK/dev"
  grep -q "^bleu $name	" "$RESULTS" && return 0
  "$BUILD/t2t-decoder" --t2t_usr_dir="$WORK/usr" --problem="$problem" --model=transformer \
    --hparams_set="$(cat "$WORK/runs/$name.set")" --data_dir="$WORK/data/$data" \
    --output_dir="$WORK/runs/$name" --decode_hparams=beam_size=4,alpha=0.6 \
    --decode_from_file="$TATOEBA/dev.en" --decode_to_file="$out" >"$WORK/logs/dev-$name.log" 2>&1
  local score
  score=$("$BUILD/t2t-bleu" --translation="$out" --reference="$TATOEBA/dev.zh" 2>/dev/null |
    awk '$1 == "BLEU_cased" {print $3}')
  record "bleu $name" 0 "$score"
  echo "$(date +%T) $name: dev BLEU $score"
}

mkdir -p "$WORK/runs"
if wants bt; then
# (a) and the reverse model, on the parallel half
problem enzh_half "train: {source: $C/half.en, target: $C/half.zh}"
datagen enzh_half
echo transformer_tiny >"$WORK/runs/half.set"; train half enzh_half enzh_half transformer_tiny "$STEPS"
echo transformer_tiny >"$WORK/runs/rev.set"; train rev enzh_half_rev enzh_half transformer_tiny "$STEPS"
bleu half enzh_half enzh_half

# Back-translations of the monolingual half: beam, and sampling
decode rev enzh_half_rev enzh_half "$C/mono.zh" "$C/bt_beam.en" --decode_hparams=beam_size=4,alpha=0.6
decode rev enzh_half_rev enzh_half "$C/mono.zh" "$C/bt_sample.en" \
  --decode_hparams=beam_size=1 --random_seed=1 --hparams=sampling_method=random,sampling_temp=1.0

# (b) the parallel half mixed 1:1 with each
for kind in beam sample; do
  for tag in plain tagged; do
    name=bt_${kind}_$tag
    tagline=""
    [ $tag = tagged ] && tagline=", tag: '<BT>'"
    problem "enzh_$name" "train:" \
      "  - {name: real, source: $C/half.en, target: $C/half.zh}" \
      "  - {name: bt, source: $C/bt_$kind.en, target: $C/mono.zh$tagline}"
    datagen "enzh_$name"
    echo transformer_tiny >"$WORK/runs/$name.set"
    train "$name" "enzh_$name" "enzh_$name" transformer_tiny "$STEPS"
    bleu "$name" "enzh_$name" "enzh_$name"
  done
done

# (b) again with the real pairs drawn twice as often as the synthetic ones
# (tagged beam back-translations)
problem enzh_bt_beam_tagged_w2 "train:" \
  "  - {name: real, source: $C/half.en, target: $C/half.zh, weight: 2}" \
  "  - {name: bt, source: $C/bt_beam.en, target: $C/mono.zh, tag: '<BT>'}"
datagen enzh_bt_beam_tagged_w2
echo transformer_tiny >"$WORK/runs/bt_beam_tagged_w2.set"
train bt_beam_tagged_w2 enzh_bt_beam_tagged_w2 enzh_bt_beam_tagged_w2 transformer_tiny "$STEPS"
bleu bt_beam_tagged_w2 enzh_bt_beam_tagged_w2 enzh_bt_beam_tagged_w2
fi

# (c) every pair
problem enzh_all "train: {source: $C/all.en, target: $C/all.zh}"
datagen enzh_all
echo transformer_tiny >"$WORK/runs/all.set"; train all enzh_all enzh_all transformer_tiny "$STEPS"
bleu all enzh_all enzh_all

# Distillation: a transformer_small teacher on every pair, a tiny student on
# its translations of the training sources
if wants distill; then
echo transformer_small >"$WORK/runs/teacher.set"
# The recipe's 400 warm-up steps peak the rate at 2 * 400^-0.5 * 256^-0.5 =
# 0.0063 for transformer_small's width: its loss stalls at the peak and it
# ends at 6 dev BLEU. 1,600 steps peak it at 0.0031.
train teacher enzh_all enzh_all transformer_small "$TEACHER_STEPS" \
  --hparams="$TEACHER_HPARAMS"
bleu teacher enzh_all enzh_all
decode teacher enzh_all enzh_all "$C/all.en" "$C/distilled.zh" --decode_hparams=beam_size=4,alpha=0.6
problem enzh_distilled "train: {source: $C/all.en, target: $C/distilled.zh}"
datagen enzh_distilled
echo transformer_tiny >"$WORK/runs/student.set"
train student enzh_distilled enzh_distilled transformer_tiny "$STEPS"
bleu student enzh_distilled enzh_distilled
# The same student on the references and the teacher's translations mixed 1:1
problem enzh_distilled_mix "train:" \
  "  - {name: real, source: $C/all.en, target: $C/all.zh}" \
  "  - {name: teacher, source: $C/all.en, target: $C/distilled.zh}"
datagen enzh_distilled_mix
echo transformer_tiny >"$WORK/runs/student_mix.set"
train student_mix enzh_distilled_mix enzh_distilled_mix transformer_tiny "$STEPS"
bleu student_mix enzh_distilled_mix enzh_distilled_mix
fi

echo
column -t -s$'\t' "$RESULTS"
