#!/usr/bin/env bash
# Installs what t2t and its tests need and builds t2t into build/ (Release).
# Used by quickstart.sh and test.sh; safe and quick to run again.
#
# Environment (all optional):
#   T2T_CACHE      where the virtualenv and pip's cache live, outside the
#                  clone so a fresh clone finds them again
#                  (default: ${XDG_CACHE_HOME:-~/.cache}/t2t)
#   T2T_VENV       the virtualenv holding the PyPI torch wheel (default: $T2T_CACHE/venv)
#   T2T_PYTHON     python3 used to create the virtualenv (default: python3)
#   T2T_TORCH_SPEC pip requirement for torch (default: torch>=2.7)
#   Torch_DIR / CMAKE_PREFIX_PATH
#                  use this LibTorch instead; no virtualenv is made
#   T2T_BUILD_DIR  build directory (default: build)
#   T2T_JOBS       parallel compile jobs (default: number of cores)
set -euo pipefail

T2T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T2T_CACHE=${T2T_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/t2t}
T2T_VENV=${T2T_VENV:-$T2T_CACHE/venv}
T2T_BUILD_DIR=${T2T_BUILD_DIR:-$T2T_ROOT/build}
T2T_JOBS=${T2T_JOBS:-$(nproc)}

say() { printf '\033[1m[t2t setup]\033[0m %s\n' "$*"; }
die() { printf '[t2t setup] error: %s\n' "$*" >&2; exit 1; }

T2T_APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache python3 python3-venv python3-dev
  libsentencepiece-dev libyaml-cpp-dev libspdlog-dev libcxxopts-dev catch2
  libprotobuf-dev protobuf-compiler libcurl4-openssl-dev libarchive-dev libgloo-dev
  libtcmalloc-minimal4 zip libcpp-httplib-dev nlohmann-json3-dev patchelf
  chromium  # the tests open t2t-serve's page in it, headless
)

install_debian_packages() {
  local missing=()
  for p in "${T2T_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "missing Debian packages: ${missing[*]}. Install them as root: apt-get install ${missing[*]}"
    sudo="sudo"
  fi
  say "installing Debian packages: ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || die "apt-get could not install: ${missing[*]}"
}

# Prints nothing; sets T2T_CMAKE_TORCH_ARGS.
prepare_libtorch() {
  T2T_CMAKE_TORCH_ARGS=()
  if [ -n "${Torch_DIR:-}" ]; then
    say "using LibTorch from Torch_DIR=$Torch_DIR"
    T2T_CMAKE_TORCH_ARGS=(-DTorch_DIR="$Torch_DIR")
    return
  fi
  if [ -n "${CMAKE_PREFIX_PATH:-}" ] && ls "${CMAKE_PREFIX_PATH%%:*}"/share/cmake/Torch >/dev/null 2>&1; then
    say "using LibTorch from CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"
    return
  fi
  local py="$T2T_VENV/bin/python"
  # Every package of the install line below is imported here, so that an
  # existing virtualenv gets one added to that line. protobuf, sacrebleu and
  # tensorboard are for the tests: they read t2t's files and recompute its
  # scores with their own code. pytest runs the Python package's tests;
  # scikit-build-core builds it (pip install --no-build-isolation ./python).
  local check='import ctranslate2, google.protobuf, numpy, pytest, sacrebleu, scikit_build_core, tensorboard, torch, yaml, sys; v=tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]); sys.exit(0 if v>=(2,7) else 1)'
  if ! [ -x "$py" ] || ! "$py" -c "$check" 2>/dev/null; then
    local base_py=${T2T_PYTHON:-python3}
    say "installing the PyPI torch wheel and the tests' Python packages into $T2T_VENV (once; about 3 GB with torch's CUDA libraries)"
    [ -x "$py" ] || "$base_py" -m venv "$T2T_VENV" || die "could not create a virtualenv with $base_py (apt-get install python3-venv)"
    export PIP_CACHE_DIR="$T2T_CACHE/pip"
    "$py" -m pip install -q --upgrade pip
    "$py" -m pip install -q "${T2T_TORCH_SPEC:-torch>=2.7}" numpy pyyaml "protobuf>=3.20,<5" sacrebleu tensorboard ctranslate2 pytest "scikit-build-core>=0.10" \
      || die "pip could not install torch and the tests' packages into $T2T_VENV"
  fi
  T2T_CMAKE_TORCH_ARGS=(-DT2T_PYTHON="$py")
}

# T2T 1.15.7's own Python code (tensor2tensor without its dependencies, no
# TensorFlow) in a virtualenv of its own under $T2T_CACHE, as
# bench/datagen/t2t_reference.py sets it up: the datagen benchmark's
# reference, and what the BLEU tests compare t2t's T2T-style scores with.
# The script returns at once when the environment is there.
prepare_t2t_reference() {
  local base_py=${T2T_PYTHON:-python3}
  [ -d "$T2T_CACHE/bench-t2t-venv" ] || say "installing T2T 1.15.7 (the tests' reference) into $T2T_CACHE/bench-t2t-venv (once)"
  T2T_CACHE="$T2T_CACHE" PIP_CACHE_DIR="$T2T_CACHE/pip" "$base_py" "$T2T_ROOT/bench/datagen/t2t_reference.py" --check \
    || die "could not set up T2T's reference environment in $T2T_CACHE/bench-t2t-venv"
}

build_t2t() {
  local args=(-S "$T2T_ROOT" -B "$T2T_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${T2T_CMAKE_TORCH_ARGS[@]}")
  command -v ninja >/dev/null && [ ! -f "$T2T_BUILD_DIR/CMakeCache.txt" ] && args+=(-G Ninja)
  if command -v ccache >/dev/null; then
    # ccache keeps compiled objects in $T2T_CACHE, so a fresh clone (as CI
    # makes) rebuilds in a fraction of the time. The sloppiness settings let
    # it cache files compiled with the precompiled LibTorch header.
    export CCACHE_DIR=${CCACHE_DIR:-$T2T_CACHE/ccache}
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    export CCACHE_BASEDIR="$T2T_ROOT"
    args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  say "configuring in $T2T_BUILD_DIR"
  mkdir -p "$T2T_BUILD_DIR"
  cmake "${args[@]}" >"$T2T_BUILD_DIR/configure.log" 2>&1 || { cat "$T2T_BUILD_DIR/configure.log" >&2; die "cmake configure failed (log above)"; }
  say "building with $T2T_JOBS jobs"
  cmake --build "$T2T_BUILD_DIR" -j "$T2T_JOBS" || die "build failed"
}

t2t_setup() {
  install_debian_packages
  prepare_libtorch
  prepare_t2t_reference
  build_t2t
}

# Run directly: install and build. Sourced: define the functions only.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  t2t_setup
fi
