#!/bin/sh
# portent bench xgbi and tune --model xgb-imp as a user runs them, on a 300-record sample of
# `portent dataset collect` (tests/data/xgbi_sample.jsonl: dwconv_mb then conv_r50_5, 150 each):
# rounds, the sweep and JSON come out; too few records and bad usage exit 2.
portent="$1"
. "$(dirname "$0")/lib.sh"
data=tests/data/xgbi_sample.jsonl

check bench 0 "$portent" bench xgbi --data $data --start 128 --step 64 --boost-rounds 8 --thresholds 0,0.1
has bench "$tmp/out" "300 records (0 skipped), 2 workloads"
has bench "$tmp/out" "test: the last 60 records; training: 128 to 240 records, 64 per round"
has bench "$tmp/out" "^    2    240 |"
has bench "$tmp/out" "prune + redistribute .* 0.1 "
check interleave 0 "$portent" bench xgbi --data $data --start 200 --step 64 --boost-rounds 8 --order interleave --json --max-rounds 1
has interleave "$tmp/out" '"rounds": \['
has interleave "$tmp/out" '"xgb_imp": {"top32"'
grep -c '"round":' "$tmp/out" | grep -qx 1 || { echo "FAIL interleave: --max-rounds 1 ran more rounds"; fail=1; }
check too-few 2 "$portent" bench xgbi --data $data --start 3840
has too-few "$tmp/err" "fewer than --start 3840"
check no-data 2 "$portent" bench xgbi --start 10
check bad-order 2 "$portent" bench xgbi --data $data --order random
check missing 2 "$portent" bench xgbi --data /nonexistent.jsonl
check all-pruned 2 "$portent" bench xgbi --data $data --start 128 --threshold 5
has all-pruned "$tmp/err" "prunes every feature"
check model 0 "$portent" tune matmul:32,24,40 --model xgb-imp:$data --trials 8 --measure-per-round 4 --population 32 \
  --generations 1 --min-time 0 --quiet
check model-bad 2 "$portent" tune matmul:32,24,40 --model xgb-imp:/nonexistent.jsonl --trials 4 --quiet
has model-bad "$tmp/err" "nonexistent.jsonl"
exit $fail
