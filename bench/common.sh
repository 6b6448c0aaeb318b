# Sourced by the benchmarks' run.sh: where the build and the torch
# virtualenv are, and the allocator the PyTorch references preload.
#   bench_require BIN...   exits with a hint when a binary is not built
# Sets ROOT, BUILD, T2T_CACHE, PYTHON and ALLOCATOR (empty when neither
# tcmalloc nor jemalloc is installed).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${T2T_BUILD_DIR:-$ROOT/build}
T2T_CACHE=${T2T_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/t2t}
PYTHON=${T2T_VENV:-$T2T_CACHE/venv}/bin/python

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
