# portent bench analyze --quick: a row per case, cache configuration and level whose errors
# parse, the exact profile's LL prediction near callgrind's, and the cost table; bad usage is
# exit 2. Skipped (77) where valgrind is not installed.
portent="$1"
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not installed: skipped"; exit 77; }
. "$(dirname "$0")/lib.sh"

check usage 2 "$portent" bench analyze --repeats 0
check help 0 "$portent" bench analyze --help
has help "$tmp/out" "callgrind"

check quick 0 "$portent" bench analyze --quick --repeats 1 --json
cp "$tmp/out" "$tmp/quick.json"
for c in '"C jacobi2d"' '"C transpose"' '"dwconv_mb default"'; do has "case $c" "$tmp/quick.json" "$c, \"simulated\": true"; done
# 3 cases x 3 cache configurations x 2 levels, each error a number
rows=$(grep -o '"error": -\{0,1\}[0-9][0-9.e+-]*' "$tmp/quick.json" | wc -l)
[ "$rows" -eq 18 ] || { echo "FAIL rows: $rows error fields, expected 18"; cat "$tmp/quick.json"; fail=1; }
# LL misses of these cases are mostly first touches and capacity misses: within 25%
grep -o '"level": "LL", "measured": [0-9]*, "predicted": [0-9.]*, "error": -\{0,1\}[0-9][0-9.e+-]*' "$tmp/quick.json" |
  awk -F'"error": ' '{ e = $2 + 0; if (e < -0.25 || e > 0.25) { print "FAIL LL error " e ": " $0; bad = 1 } } END { exit bad }' || fail=1
# D1 from the exact profile's per-set bins (64 sets in every configuration): within 10%, where
# the fully associative rule of session 9 was 32% low on transpose at 48K (a bin split)
grep -o '"level": "D1", "measured": [0-9]*, "predicted": [0-9.]*, "error": -\{0,1\}[0-9][0-9.e+-]*' "$tmp/quick.json" |
  awk -F'"error": ' '{ e = $2 + 0; if (e < -0.10 || e > 0.10) { print "FAIL D1 error " e ": " $0; bad = 1 } } END { exit bad }' || fail=1
grep -q '"name": "C transpose".*"caches": "48K/2M", "level": "D1", "measured": [0-9]*, "predicted": [0-9.]*, "error": [-0-9.e+]*, "predicted_before": [0-9.]*, "error_before": -0\.3' "$tmp/quick.json" ||
  { echo "FAIL: C transpose 48K D1 before: not the bin split's -32%"; fail=1; }
# the cost of the workload candidate: a native time and a sampled profile time
grep -q '"dwconv_mb default".*"native_s": [0-9.e-]*[1-9][0-9.e-]*, "compile_s": [^,]*, "sampled_run_s": [0-9.e-]*[1-9]' "$tmp/quick.json" ||
  { echo "FAIL cost: no native and sampled times for dwconv_mb"; fail=1; }
# the native time's rounds (session 18): the smallest and largest round's median
grep -q '"dwconv_mb default".*"native_min_round_s": [0-9.e-]*[1-9][0-9.e-]*, "native_max_round_s": [0-9.e-]*[1-9]' "$tmp/quick.json" ||
  { echo "FAIL cost: no native rounds for dwconv_mb"; fail=1; }
exit $fail
