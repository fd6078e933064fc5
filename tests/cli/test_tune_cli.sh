#!/bin/sh
# portent tune as a user runs it: a short search writes one record per measurement, the best
# module and the curve; a candidate past its time limit is recorded with its error code and the
# search goes on; resuming reports a truncated or corrupted line by number and skips it;
# kill -9 loses at most the candidate being measured; two tuners share one log without
# interleaving lines; bad usage exits 2.
portent="$1"
. "$(dirname "$0")/lib.sh"
lines() { wc -l <"$1" | tr -d ' '; }
quick="--population 24 --generations 1 --measure-per-round 4 --min-time 0 --threads 1 --quiet"
w=matmul:32,24,40

check tune 0 "$portent" tune $w --trials 8 $quick --log "$tmp/log" -o "$tmp/best.ll" --curve "$tmp/c.svg"
has tune "$tmp/out" "best: .* ms"
has tune "$tmp/out" '^steps: \[\["'
[ "$(lines "$tmp/log")" = 8 ] || { echo "FAIL tune: $(lines "$tmp/log") records, expected 8"; fail=1; }
has tune-ll "$tmp/best.ll" "define void @portent_matmul"
has tune-svg "$tmp/c.svg" "<polyline"
check tune-json 0 "$portent" tune $w --trials 4 $quick --json
has tune-json "$tmp/out" '"best_seconds": '

# A candidate that runs past --timeout is recorded with TVM's error code 7 and cost 1e10 and the
# search goes on: no candidate of a 1024^3 matmul (2 GFLOP, well over 1 ms on one core) finishes
# in 1 ms, so both rounds measure, every record is a timeout, and the exit says none ran.
check timeout 1 "$portent" tune matmul:1024,1024,1024 --trials 4 $quick --measure-per-round 2 --timeout 0.001 \
  --log "$tmp/log_timeout"
has timeout "$tmp/err" "no candidate ran correctly (4 measured, 4 failed)"
[ "$(grep -c '"r": \[\[1e+10\], 7,' "$tmp/log_timeout")" = 4 ] ||
  { echo "FAIL timeout: not 4 timeout records:"; cat "$tmp/log_timeout"; fail=1; }

# A truncated last line and a garbage line: named by number, skipped; the run continues.
head -c -30 "$tmp/log" >"$tmp/log2" && printf '\nnot json at all\n' >>"$tmp/log2"
check resume 0 "$portent" tune $w --trials 12 $quick --log "$tmp/log2" --resume
has resume "$tmp/err" "log2:8:"
has resume "$tmp/err" "log2:9:"
has resume "$tmp/err" "resumed 7 measured candidates"
[ "$(lines "$tmp/log2")" = 14 ] || { echo "FAIL resume: $(lines "$tmp/log2") lines, expected 9 + 5"; fail=1; }

# kill -9 in the middle of a run: every line written is a whole record.
"$portent" tune $w --trials 1000 $quick --log "$tmp/log3" >/dev/null 2>&1 &
pid=$!
# Kill once it has written records (on a loaded machine the first round can take seconds).
i=0
while [ $i -lt 120 ] && ! [ -s "$tmp/log3" ]; do sleep 0.5; i=$((i + 1)); done
sleep 1
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
n=$(lines "$tmp/log3")
check resume-killed 0 "$portent" tune $w --trials $((n + 2)) $quick --log "$tmp/log3" --resume
has resume-killed "$tmp/err" "resumed $n measured candidates from .* (0 unusable lines skipped)"

# Two tuners appending to one log: no interleaved lines.
"$portent" tune $w --trials 8 $quick --seed 5 --log "$tmp/log4" >/dev/null 2>&1 &
p1=$!
"$portent" tune matmul:40,24,32 --trials 8 $quick --seed 6 --log "$tmp/log4" >/dev/null 2>&1 &
p2=$!
wait $p1 $p2
check shared-log 0 "$portent" tune $w --trials 8 $quick --log "$tmp/log4" --resume
has shared-log "$tmp/err" "resumed 8 measured candidates from .* (0 unusable lines skipped)"
[ "$(lines "$tmp/log4")" = 16 ] || { echo "FAIL shared-log: $(lines "$tmp/log4") lines, expected 16"; fail=1; }

# A target nobody here can run: the analytic model ranks, nothing is measured.
check measure0 0 "$portent" tune matmul:16,16,16 --model analytic --target targets/intel-skylake-sp.json --measure 0 \
  --population 6 --generations 0 -o "$tmp/pred.ll"
has measure0 "$tmp/out" "predicted best (nothing measured)"
has measure0-ll "$tmp/pred.ll" "define void @portent_matmul"

# The analytic model predicts for the threads the candidates will run on (--threads): the same
# candidates (same seed) on one of Zen 4's two cores are predicted slower than on both.
predicted_ms() { sed -n 's/.*predicted best (nothing measured): \([0-9.]*\) ms.*/\1/p' "$tmp/out"; }
m0="tune matmul:128,128,128 --model analytic --target targets/zen4-epyc-2c.json --measure 0 --population 8 --generations 0 --seed 3"
check measure0-t1 0 "$portent" $m0 --threads 1
t1=$(predicted_ms)
check measure0-t2 0 "$portent" $m0 --threads 2
t2=$(predicted_ms)
awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(a > 1.3 * b) }' ||
  { echo "FAIL measure0-threads: predicted $t1 ms on 1 thread, $t2 ms on 2 (expected the first > 1.3 x the second)"; fail=1; }

# --measure 0 with xgb+analytic: xgb first learns the analytic model's order from its
# predictions (a sample of 32, then a round of 16), and orders fresh candidates as analytic
# does better than untrained (chance); nothing is measured or logged.
lq="tune matmul:64,64,64 --model xgb+analytic --target targets/zen4-epyc-2c.json --measure 0 --threads 1 --seed 4
 --population 64 --generations 1 --measure-per-round 16 --label-rounds 1 --label-check 48 --log $tmp/labels.jsonl"
agreement() { sed -n 's/^label check: xgb orders \([0-9.]*\) of.*/\1/p' "$tmp/out"; }
check labels 0 "$portent" $lq
has labels "$tmp/out" "^labels: xgb trained on 48 analytic predictions"
trained=$(agreement)
check labels-off 0 "$portent" $lq --analytic-labels 0
untrained=$(agreement)
awk -v a="$trained" -v b="$untrained" 'BEGIN { exit !(a >= 0.6 && a >= b + 0.1) }' ||
  { echo "FAIL labels: xgb orders $trained of pairs as analytic trained, $untrained untrained"; fail=1; }
[ ! -e "$tmp/labels.jsonl" ] || { echo "FAIL labels: predictions were written to the log"; fail=1; }
check labels-json 0 "$portent" $lq --json
has labels-json "$tmp/out" '"measured": 0,'
has labels-json "$tmp/out" '"analytic_labels": 48, "label_rounds": 1'
# Resumed measurements train xgb as before: no labels, the log unchanged.
before=$(lines "$tmp/log")
check labels-resume 0 "$portent" tune $w --model xgb+analytic --target targets/zen4-epyc-2c.json --measure 0 \
  --threads 1 --population 24 --generations 1 --measure-per-round 4 --log "$tmp/log" --resume
has labels-resume "$tmp/err" "resumed $before measured candidates"
! grep -q "^labels:" "$tmp/out" || { echo "FAIL labels-resume: labelled after resuming measurements"; fail=1; }
[ "$(lines "$tmp/log")" = "$before" ] || { echo "FAIL labels-resume: the log grew"; fail=1; }

check no-workload 2 "$portent" tune
check bad-model 2 "$portent" tune $w --model nonsense
has bad-model "$tmp/err" "unknown cost model 'nonsense'"
check measure0-needs-analytic 2 "$portent" tune $w --measure 0
has measure0-needs-analytic "$tmp/err" "analytic"
check resume-needs-log 2 "$portent" tune $w --resume
check bench-tune-help 0 "$portent" bench tune --help

# bench tune over a results directory: a second run continues the first search (4 + 4
# records), the library timings gather a sample per run, --report rebuilds the table alone.
bq="--workloads mm512 --models random --checkpoints 4,8 --population 16 --generations 1 --measure-per-round 4 --min-time 0 --threads 1"
check bench-tune-part 0 "$portent" bench tune $bq --max-measurements 4 --results "$tmp/bt"
[ "$(lines "$tmp/bt/mm512_random.jsonl")" = 4 ] || { echo "FAIL bench-tune-part: $(lines "$tmp/bt/mm512_random.jsonl") records, expected 4"; fail=1; }
check bench-tune-resume 0 "$portent" bench tune $bq --results "$tmp/bt"
[ "$(lines "$tmp/bt/mm512_random.jsonl")" = 8 ] || { echo "FAIL bench-tune-resume: $(lines "$tmp/bt/mm512_random.jsonl") records, expected 8"; fail=1; }
has bench-tune-stats "$tmp/bt/mm512_random.stats.json" '"measured":8'
has bench-tune-baselines "$tmp/bt/mm512.baselines.json" '"openblas_s":\[[0-9.e-]*,[0-9.e-]*\]'
check bench-tune-report 0 "$portent" bench tune --report "$tmp/bt" --checkpoints 4,8,16 --json
has bench-tune-report "$tmp/out" '"workload": "mm512", "model": "random", "measured": 8'
has bench-tune-report "$tmp/out" '"geomean_speed_vs_onednn"'
check bench-tune-table 0 "$portent" bench tune --report "$tmp/bt" --checkpoints 4,8,16
has bench-tune-table "$tmp/out" "^mm512 *random .* - "
# Comparing models: a second model's search into the same directory, and the tuning curve with
# one line per model (--svg-dir: DIR/tune_WORKLOAD.svg).
check bench-tune-xgb 0 "$portent" bench tune $bq --models xgb --max-measurements 4 --results "$tmp/bt"
check bench-tune-svg 0 "$portent" bench tune --report "$tmp/bt" --models random,xgb --checkpoints 4,8 --svg-dir "$tmp"
[ "$(grep -c "<polyline" "$tmp/tune_mm512.svg")" = 2 ] ||
  { echo "FAIL bench-tune-svg: $(grep -c "<polyline" "$tmp/tune_mm512.svg") curves in tune_mm512.svg, expected 2"; fail=1; }
exit $fail
