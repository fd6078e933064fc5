#!/bin/sh
# portent networks, dataset collect --network (resumable), dataset split --by-network and
# bench learn --quick on the sample of network records in tests/data, as a user runs them.
portent="$1"
. "$(dirname "$0")/lib.sh"
lines() { wc -l <"$1" | tr -d ' '; }

check networks 0 "$portent" networks
has networks "$tmp/out" "resnet50 .*test"
has networks "$tmp/out" "densenet121 .*training"
check networks-json 0 "$portent" networks bert_base --json
has networks-json "$tmp/out" '"weight": 48'
check networks-unknown 2 "$portent" networks alexnet
has networks-unknown "$tmp/err" "alexnet"

# bert_tiny's tasks under 0.1 MFLOP: the pooler's dense 1x128x128 and nothing else that small
# but the softmax of 256 x 128 (4 flops an element).
check collect 0 "$portent" dataset collect --network bert_tiny --max-gflop 0.0002 --per-workload 2 \
  --min-time 0 --log "$tmp/n.jsonl" --seed 5
has collect "$tmp/err" "left out"
n1=$(lines "$tmp/n.jsonl")
[ "$n1" -eq 4 ] || { echo "FAIL collect: $n1 records, expected 2 tasks x 2"; fail=1; }
check resume 0 "$portent" dataset collect --network bert_tiny --max-gflop 0.0002 --per-workload 3 \
  --min-time 0 --log "$tmp/n.jsonl" --seed 5
n2=$(lines "$tmp/n.jsonl")
[ "$n2" -eq 6 ] || { echo "FAIL resume: $n2 records, expected 6 (one more draw per task)"; fail=1; }
distinct=$(sed 's/"r": .*//' "$tmp/n.jsonl" | sort -u | wc -l | tr -d ' ')
[ "$distinct" -eq 6 ] || { echo "FAIL resume: $distinct distinct schedules of 6 (resuming re-measured a draw)"; fail=1; }
check resume-done 0 "$portent" dataset collect --network bert_tiny --max-gflop 0.0002 --per-workload 3 \
  --min-time 0 --log "$tmp/n.jsonl" --seed 5
has resume-done "$tmp/out" "already had 3 records"
check collect-both 2 "$portent" dataset collect --network bert_tiny --workloads mm512 --per-workload 1 --log "$tmp/x.jsonl"
check collect-unknown 2 "$portent" dataset collect --network alexnet --per-workload 1 --log "$tmp/x.jsonl"

sample=tests/data/networks_sample.jsonl
check split 0 "$portent" dataset split --data $sample --by-network -o "$tmp/split.json"
has split "$tmp/out" "test networks' tasks: 3 held out; validation: 1; training: 6"
has split "$tmp/split.json" '"validation"'
has split "$tmp/split.json" 'dense\\", 1, 128, 128'

models=analytic,xgb,tlp,mtl
[ "${PORTENT_TEST_QUICK:-0}" = 1 ] && models=xgb,tlp
check bench-learn 0 "$portent" bench learn --data $sample --quick --models $models
has bench-learn "$tmp/out" "random (expectation)"
has bench-learn "$tmp/out" "^tlp  "
has bench-learn "$tmp/out" "^xgb  "
has bench-learn "$tmp/out" "candidates/s"
has bench-learn "$tmp/out" "bert_tiny"
check bench-learn-aux1 2 "$portent" bench learn --data $sample --quick --aux-per-task 1
has bench-learn-aux1 "$tmp/err" "at least 2"
check bench-learn-nodata 2 "$portent" bench learn --quick
check bench-learn-notest 2 "$portent" bench learn --quick --data "$tmp/n.jsonl" --models xgb
exit $fail
