#!/usr/bin/env bash
# ll_misses.sh DIR [D1SIZE D1WAYS LLSIZE LLWAYS]: a compiled kernel's LL misses when the LL sees only
# the D1's misses (callgrind's model) and when it sees every access (a profile's per-set stacks).
# DIR is a folder that `portent bench analyze --keep` left (kernel.exe, built from portent's IR).
# Runs the kernel under valgrind's lackey once (every data access, slow: 12 minutes for the 266 M
# of mm512 random seed 8 on a Zen 4) and simulates over the accesses of the kernel's own functions
# (portent_*) a D1 of D1SIZE bytes and D1WAYS ways with an LL of LLSIZE bytes and LLWAYS ways
# behind it, and an LL of that geometry alone (scripts/ll_trace.c; default 32768 8 1048576 16,
# bench analyze's 32K/1M configuration, `--D1=32768,8,64 --LL=1048576,16,64`), with every access
# and without those of the instructions that address the stack (spills, which the IR has not).
# Progress goes to stderr every 10 M accesses.
set -euo pipefail
dir=${1:?usage: ll_misses.sh DIR [D1SIZE D1WAYS LLSIZE LLWAYS]}
d1size=${2:-32768}
d1ways=${3:-8}
llsize=${4:-1048576}
llways=${5:-16}
. "$(dirname "$0")/kernel_code.sh"
kernel_setup "$dir" ll_trace
echo "kernel code [$lo, $hi), $(wc -l < "$tmp/stack_ops") instructions address the stack; D1 $d1size B $d1ways-way, LL $llsize B $llways-way"
kernel_trace ll_trace "$d1size" "$d1ways" "$llsize" "$llways"
