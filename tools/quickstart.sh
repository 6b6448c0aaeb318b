#!/usr/bin/env bash
# Installs what is missing, builds t2t (Release) into build/, then runs the
# main job on the bundled English-Chinese sample.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
t2t_setup

BIN="$T2T_BUILD_DIR"
say "built: $BIN/t2t-datagen, $BIN/t2t-trainer, $BIN/t2t-decoder"
"$BIN/t2t-trainer" --registry_help
say "this build has the registry, hparams sets and front ends; the sample pipeline (datagen -> train -> decode -> BLEU) is not part of it yet, so the quickstart stops here"
