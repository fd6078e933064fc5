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
. "$(dirname "$0")/kernel_code.sh"
kernel_setup "$dir" lru_trace
echo "kernel code [$lo, $hi), $(wc -l < "$tmp/stack_ops") instructions address the stack"
kernel_trace lru_trace "$size" "$ways"
