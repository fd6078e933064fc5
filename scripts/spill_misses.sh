#!/usr/bin/env bash
# spill_misses.sh DIR [SIZE WAYS]: how many of a compiled kernel's D1 misses its stack traffic makes.
# DIR is a folder that `portent bench analyze --keep` left (kernel.exe, built from portent's IR).
# Runs the kernel under valgrind's lackey (every data access, slow: minutes for mm512) and simulates
# a SIZE-byte WAYS-way LRU D1 (default 16384 4, bench analyze's 16K configuration) over the accesses
# of the kernel's own functions (portent_*), with and without the instructions that address the
# stack (%rsp: the register allocator's spills and reloads), which the target-neutral IR has not.
set -euo pipefail
dir=${1:?usage: spill_misses.sh DIR [SIZE WAYS]}
size=${2:-16384}
ways=${3:-4}
exe=$dir/kernel.exe
[ -x "$exe" ] || { echo "spill_misses.sh: $exe not found (portent bench analyze --keep)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/lru_trace" "$(dirname "$0")/lru_trace.c"
# valgrind loads a position-independent executable at 0x108000 on amd64
base=$((0x108000))
read -r lo hi < <(nm -S "$exe" | python3 -c '
import sys
r = [(int(w[0], 16), int(w[0], 16) + int(w[1], 16)) for w in (l.split() for l in sys.stdin)
     if len(w) == 4 and w[2] in "tT" and w[3].startswith("portent_")]
print(min(a for a, _ in r) if r else 0, max(b for _, b in r) if r else 0)')
[ "${hi:-0}" -gt 0 ] || { echo "spill_misses.sh: no portent_* function in $exe" >&2; exit 2; }
objdump -d --no-show-raw-insn "$exe" | python3 -c '
import sys
lo, hi, base = (int(x) for x in sys.argv[1:4])
for l in sys.stdin:
    w = l.split(":", 1)
    try:
        a = int(w[0], 16)
    except ValueError:
        continue
    if len(w) == 2 and lo <= a < hi and "(%rsp" in w[1]:
        print("%x" % (a + base))' "$lo" "$hi" "$base" > "$tmp/stack_ops"
echo "kernel code [$(printf %x $((lo + base))), $(printf %x $((hi + base)))), $(wc -l < "$tmp/stack_ops") instructions address the stack"
valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$exe" 3>&1 1>/dev/null 2>/dev/null |
  "$tmp/lru_trace" "$size" "$ways" "$(printf %x $((lo + base)))" "$(printf %x $((hi + base)))" "$tmp/stack_ops"
