#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds portent (when build/portent is missing or stale),
# checks the GPU probes (ctest microbench_test_gpu must pass, not skip), then runs
# `portent characterize --gpu` and writes the target description (default targets/h100.json).
# The host CPU is characterized in the same run, so the file describes the whole machine.
#
#   scripts/gpu-characterize.sh [OUT.json] [extra characterize options, e.g. --quick]
#
# With $OUT set (the device machine's results folder) the target file and the log are
# copied there as well. Exits 1 with the reason when there is no usable GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-targets/h100.json}
[ $# -gt 0 ] && shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT

say() { echo "gpu-characterize: $*" >&2; }

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader >&2 || true
else
  say "nvidia-smi not found (the driver may still be there; portent asks libcuda.so.1 itself)"
fi

# Build: reuse a build that runs here, otherwise configure and build (needs the packages of
# scripts/install-deps.sh; a machine without network must have them already).
if ! build/portent --help >/dev/null 2>&1; then
  if ! command -v llvm-config-19 >/dev/null 2>&1; then
    say "llvm-19 is not installed and build/portent does not run here; run scripts/install-deps.sh first"
    exit 1
  fi
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
  cmake --build build -j"$(nproc)" >/dev/null || { say "build failed"; exit 1; }
fi

# The probes' own test: with a GPU it must pass (77 would mean no GPU was found).
if [ -d build/tests ] || [ -f build/CTestTestfile.cmake ]; then
  ctest --test-dir build -R microbench_test_gpu --output-on-failure >"$log" 2>&1
  rc=$?
  cat "$log" >&2
  if grep -q "Skipped" "$log"; then
    say "the GPU test skipped: no usable GPU on this machine"
    exit 1
  fi
  [ $rc -eq 0 ] || { say "the GPU test failed"; exit 1; }
fi

mkdir -p "$(dirname "$out")"
start=$(date +%s)
name=()
case " $* " in *" --name "*) ;; *) name=(--name "$(basename "$out" .json)") ;; esac
build/portent characterize --gpu "${name[@]}" -o "$out" "$@" 2> >(tee "$log" >&2)
rc=$?
sleep 0.2 # let tee finish
say "characterize exited $rc after $(($(date +%s) - start)) s"
[ $rc -eq 0 ] || exit 1
build/portent targets validate "$out" && build/portent targets show "$out" | head -60
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  cp "$out" "$OUT/" && cp "$log" "$OUT/gpu-characterize.log"
  say "copied $(basename "$out") and the log to $OUT"
fi
