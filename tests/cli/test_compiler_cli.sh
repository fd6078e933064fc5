#!/bin/sh
# The workloads, compile and run commands as a user calls them: outputs, files and exit codes.
portent="$1"
. "$(dirname "$0")/lib.sh"

check workloads 0 "$portent" workloads
has workloads "$tmp/out" "conv_r50_3"
check workloads-json 0 "$portent" workloads --json
has workloads-json "$tmp/out" '"suite": \['

check compile-ll 0 "$portent" compile matmul:32,32,32 -o "$tmp/k.ll"
has compile-ll "$tmp/k.ll" "define void @portent_matmul(ptr"
# Target-neutral: no triple, no host CPU in the module.
if grep -q 'target triple\|target-cpu' "$tmp/k.ll"; then echo "FAIL compile-ll: the module names a target"; fail=1; fi
check compile-o 0 "$portent" compile matmul:32,32,32 -o "$tmp/k.o"
[ -s "$tmp/k.o" ] || { echo "FAIL compile-o: no object"; fail=1; }
check compile-s 0 "$portent" compile matmul:32,32,32 -o "$tmp/k.s"
has compile-s "$tmp/k.s" "portent_matmul"
check compile-parallel-md 0 "$portent" compile mm512 -o "$tmp/mm.ll"
has compile-parallel-md "$tmp/mm.ll" '!{ptr @portent_mm512_par0, i64 1024}'
check compile-json 0 "$portent" compile mm512 --json
has compile-json "$tmp/out" '"parallel_functions": \["portent_mm512_par0"\]'
check compile-bad-ext 1 "$portent" compile matmul:8,8,8 -o "$tmp/k.txt"
has compile-bad-ext "$tmp/err" "must end in .ll, .o or .s"
check compile-unwritable 1 "$portent" compile matmul:8,8,8 -o /nonexistent/dir/k.ll
has compile-unwritable "$tmp/err" "/nonexistent/dir/k.ll"

check run 0 "$portent" run matmul:48,32,40 --threads 2 --min-time 0
has run "$tmp/out" "matches the reference"
check run-json 0 "$portent" run conv2d_nchw:1,3,10,10,4,3,3,1,1 --naive --min-time 0 --json
has run-json "$tmp/out" '"error_code": 0'
check run-steps 0 "$portent" run matmul_add:32,32,32 --min-time 0 --steps '[["SP", 2, 0, 32, [4], 1], ["AN", 2, 2, 2]]'
check run-schedule 0 "$portent" run '["matmul_add", 1024, 1024, 1024, "float32"]' --schedule tests/data/tvm_logs/matmul.json --min-time 0 --threads 2

check run-log 0 "$portent" run matmul_add:32,32,32 --min-time 0 --log "$tmp/log.jsonl"
check run-log-naive 0 "$portent" run matmul_add:32,32,32 --min-time 0 --naive --log "$tmp/log.jsonl"
[ "$(wc -l < "$tmp/log.jsonl")" -eq 2 ] || { echo "FAIL run-log: expected 2 records"; fail=1; }
has run-log "$tmp/log.jsonl" '"v": "v0.6"'
check run-from-log 0 "$portent" run matmul_add:32,32,32 --min-time 0 --schedule "$tmp/log.jsonl"

check bad-workload 2 "$portent" run mm9999
has bad-workload "$tmp/err" "not a suite name"
check bad-steps-json 2 "$portent" run matmul:8,8,8 --steps '[["SP", 2, 0'
check bad-step 2 "$portent" run matmul:8,8,8 --steps '[["CA", 2, 2, 0]]'
has bad-step "$tmp/err" "CA"
check bad-option 2 "$portent" run matmul:8,8,8 --frobnicate
check bad-threads 2 "$portent" run matmul:8,8,8 --threads 0
check no-record 2 "$portent" run matmul:8,8,8 --schedule tests/data/tvm_logs/matmul.json
has no-record "$tmp/err" "no valid record"
check unknown-command 2 "$portent" frobnicate
check help 0 "$portent" run --help

[ $fail -eq 0 ] && echo "compiler CLI: all checks passed"
exit $fail
