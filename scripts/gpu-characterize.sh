#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds portent (when build/portent is missing or stale),
# checks the GPU probes (ctest microbench_test_gpu must pass, not skip), then runs
# `portent characterize --gpu` and writes the target description (default targets/h100.json).
# The host CPU is characterized in the same run, so the file describes the whole machine.
#
#   scripts/gpu-characterize.sh [OUT.json] [extra characterize options, e.g. --quick]
#
# With $OUT set (the device machine's results folder) the target file and the log are
# copied there as well. Exits 1 with the reason when there is no usable GPU. At the end it prints
# the measured GPU figures beside the H100 SXM5's published ones (sources in the table below).
# `scripts/gpu-characterize.sh --compare FILE.json` only prints that comparison for FILE.
set -uo pipefail
cd "$(dirname "$0")/.."
compare_only=false
if [ "${1:-}" = --compare ]; then
  compare_only=true
  shift
fi
out=${1:-targets/h100.json}
[ $# -gt 0 ] && shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT

say() { echo "gpu-characterize: $*" >&2; }

# Measured GPU figures beside the H100 SXM5's published ones. The published table is here, not
# in a target file (a target file needs the host CPU's tables). Values as "figure published
# source"; the measured value is read from the gpu section of $out (cJSON's layout: one key per
# line, a figure either a number or an object whose "value" line follows).
published() {
  cat <<'TABLE'
sms 132 NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5: 132 SMs)
clock_ghz 1.98 derived: 67 TFLOPS / (132 SMs x 128 FP32 lanes x 2 flops)
sm_clock_ghz 1.98 derived: 67 TFLOPS / (132 SMs x 128 FP32 lanes x 2 flops)
fp32_tflops 67 NVIDIA H100 datasheet, SXM: FP32 67 TFLOPS
bf16_mma_tflops 989 NVIDIA H100 datasheet, SXM: BF16 Tensor Core 1979 TFLOPS with sparsity, 989 dense
fp16_mma_tflops 989 NVIDIA H100 datasheet, SXM: FP16 Tensor Core 1979 TFLOPS with sparsity, 989 dense
memory_bandwidth_gbs 3350 NVIDIA H100 datasheet, SXM: HBM3 3.35 TB/s (the copy kernel reads and writes)
l2_mib 50 NVIDIA H100 whitepaper: 50 MB L2
smem_bandwidth_gbs 33450 derived: 32 banks x 4 bytes per clock per SM (CUDA C Programming Guide) x 132 SMs x 1.98 GHz
h2d_gbs 64 PCIe 5.0 x16, one direction, before protocol overhead (datasheet: PCIe Gen5 128 GB/s both ways)
d2h_gbs 64 PCIe 5.0 x16, one direction, before protocol overhead
TABLE
}
measured() { # $1 = key in the gpu section
  awk -v want="$1" '
    { line = $0; gsub(/[\t ,]/, "", line) }
    /^\t"gpu":/ { in_gpu = 1; next }
    in_gpu && /^\t\}/ { in_gpu = 0 }
    !in_gpu { next }
    pending && line ~ /^"value":/ { sub(/^"value":/, "", line); print line; exit }
    line ~ "^\"" want "\":\\{" { pending = 1; next }
    line ~ "^\"" want "\":" { sub("^\"" want "\":", "", line); print line; exit }
  ' "$out"
}
compare() {
  echo
  echo "GPU figures: measured ($out) vs published (H100 SXM5)"
  printf '%-22s %12s %12s %8s  %s\n' figure measured published ratio source
  published | while read -r key pub src; do
    if [ "$key" = l2_mib ]; then
      m=$(measured l2_bytes); [ -n "$m" ] && m=$(awk -v b="$m" 'BEGIN { printf "%.1f", b / 1048576 }')
    else
      m=$(measured "$key")
    fi
    ratio=$(awk -v m="${m:-null}" -v p="$pub" 'BEGIN { if (m == "null" || m == "") print "-"; else printf "%.2f", m / p }')
    printf '%-22s %12s %12s %8s  %s\n' "$key" "${m:-null}" "$pub" "$ratio" "$src"
  done
  for key in launch_us smem_latency_ns l1_latency_ns l2_latency_ns memory_latency_ns l2_bandwidth_gbs; do
    printf '%-22s %12s %12s %8s  %s\n' "$key" "$(measured "$key")" - - "no published figure used"
  done
  echo "timer: $(grep -o '"timer":[[:space:]]*"[^"]*"' "$out" | sed 's/^"timer":[[:space:]]*//')"
  echo "notes: a device other than the SXM5 (not 132 SMs) has other published figures; the datasheet's"
  echo "tensor-core peak is reached with Hopper's wgmma, while these kernels use mma.sync (sm_80 PTX),"
  echo "which is expected to fall short of it; published bandwidths are peaks, not sustained rates."
}

if $compare_only; then
  [ -f "$out" ] || { say "$out: no such file"; exit 2; }
  compare
  exit 0
fi

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
  # the PTX and CUPTI-layout checks skip where the toolkit is absent; only a failure stops here
  ctest --test-dir build -R 'microbench_test_gpu_(ptx|cupti)' --output-on-failure >&2 || { say "a GPU check failed"; exit 1; }
  ctest --test-dir build -R '^microbench_test_gpu$' --output-on-failure >"$log" 2>&1
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
compare

if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  cp "$out" "$OUT/" && cp "$log" "$OUT/gpu-characterize.log"
  say "copied $(basename "$out") and the log to $OUT"
fi
