#!/bin/sh
# portent bench predict's saved sets as a user runs them: --save writes the target, records and
# gzipped profiles; --from and --cross predict them again without running anything and agree
# with the run that made them; --replay --measure-only predicts a second machine's times from the
# first one's profiles; --restatic brings an older set's static fields up to date; --mca prints
# llvm-mca beside the simulator; a corrupted or
# missing set is a clear error (exit 2).
portent="$1"
. "$(dirname "$0")/lib.sh"
w=matmul:32,24,40
quick="--workloads $w --candidates 2 --min-time 0.001 --svg $tmp/s.svg"

check save 0 "$portent" bench predict $quick --save "$tmp/a" --platform testbox --json
has save-json "$tmp/out" '"candidates": 3'
for f in target.json records.jsonl profiles.jsonl.gz; do
  [ -s "$tmp/a/$f" ] || { echo "FAIL save: $tmp/a/$f missing or empty"; fail=1; }
done
has save-records "$tmp/a/records.jsonl" '"platform": "testbox", "workload": "matmul:32,24,40"'
has save-records "$tmp/a/records.jsonl" '"v": "v0.6"'
mape=$(sed 's/.*"steady+bw": {"mape": \([0-9.]*\).*/\1/' "$tmp/out")

check from 0 "$portent" bench predict --from "$tmp/a" --json --svg "$tmp/s2.svg"
has from "$tmp/out" '"candidates": 3'
has from-same "$tmp/out" "\"steady+bw\": {\"mape\": $mape"
cp -r "$tmp/a" "$tmp/b"
check cross 0 "$portent" bench predict --cross "$tmp/a" "$tmp/b" --svg "$tmp/s3.svg" --worst 2
has cross "$tmp/out" "^matmul:32,24,40 *3 "
has cross-worst "$tmp/out" "^worst 2 candidates"
has cross-svg "$tmp/s3.svg" "<circle"

# --split: every model on the workloads named and on the others; a name not in the set is refused.
check split 0 "$portent" bench predict --from "$tmp/a" --split "$w" --svg "$tmp/s8.svg"
has split "$tmp/out" "^split: chosen on matmul:32,24,40, reported on the other workloads"
has split-row "$tmp/out" "^steady+bw+overlap+strides  .*%.*|"
check split-unknown 2 "$portent" bench predict --from "$tmp/a" --split "$w,mm512" --svg "$tmp/s9.svg"
has split-unknown "$tmp/err" "'mm512' is not a workload of the set"

# --pairs: candidate 0 copied as candidates 5 and 6 (the same schedule and profile: one predicted
# time) with measured times 1, 1.5 and 2 ms is a tie group of three, spread 2x; the best Spearman
# with it tied is printed; a workload not in the set is refused.
mkdir -p "$tmp/ties" && cp "$tmp/a/target.json" "$tmp/ties/"
{
  grep -v '"candidate": 0,' "$tmp/a/records.jsonl"
  for c in 0:0.001 5:0.0015 6:0.002; do
    grep '"candidate": 0,' "$tmp/a/records.jsonl" | sed "s/\"candidate\": 0,/\"candidate\": ${c%%:*},/; s/\"r\": \[\[[^]]*\]/\"r\": [[${c#*:}]/"
  done
} >"$tmp/ties/records.jsonl"
gzip -dc "$tmp/a/profiles.jsonl.gz" | {
  while IFS= read -r line; do
    printf '%s\n' "$line"
    case "$line" in *'"candidate": 0,'*) for c in 5 6; do printf '%s\n' "$line" | sed "s/\"candidate\": 0,/\"candidate\": $c,/"; done ;; esac
  done
} | gzip >"$tmp/ties/profiles.jsonl.gz"
check pairs 0 "$portent" bench predict --from "$tmp/ties" --pairs "$w" --svg "$tmp/s12.svg"
has pairs "$tmp/out" "^misordered pairs of matmul:32,24,40 (.*): [0-9]* of 10, Spearman"
has pairs-classes "$tmp/out" "measured within 5% of each other: [0-9]*; predicted within 3%: [0-9]*; the rest: [0-9]*"
has pairs-ties "$tmp/out" "3 candidates predicted .* ms, measured 1-2 ms (2.00x): #[056] #[056] #[056]$"
has pairs-best "$tmp/out" "the best a model that keeps the groups tied can reach): [0-9.]*$"
check pairs-unknown 2 "$portent" bench predict --from "$tmp/ties" --pairs mm512 --svg "$tmp/s13.svg"
has pairs-unknown "$tmp/err" "'mm512' is not a workload of the set"

# The distinct column: candidates 0, 5 and 6 of the ties set are one program (one module id),
# counted once at the median of 1, 1.5 and 2 ms: the Spearman over programs is the one of a set
# that holds the program once, measured 1.5 ms; the headline Spearman stays over candidates.
mkdir -p "$tmp/med" && cp "$tmp/a/target.json" "$tmp/a/profiles.jsonl.gz" "$tmp/med/"
{
  grep -v '"candidate": 0,' "$tmp/a/records.jsonl"
  grep '"candidate": 0,' "$tmp/a/records.jsonl" | sed 's/"r": \[\[[^]]*\]/"r": [[0.0015]/'
} >"$tmp/med/records.jsonl"
check distinct-ties 0 "$portent" bench predict --from "$tmp/ties" --svg "$tmp/s19.svg"
ties_row=$(grep "^$w " "$tmp/out")
check distinct-med 0 "$portent" bench predict --from "$tmp/med" --svg "$tmp/s20.svg"
med_row=$(grep "^$w " "$tmp/out")
set -- $ties_row && t_n=$2 t_prog=$3 t_dist=$6
set -- $med_row && m_n=$2 m_prog=$3 m_sp=$5 m_dist=$6
[ "$t_n" = 5 ] && [ "$m_n" = 3 ] && [ "$t_prog" = "$m_prog" ] && [ $((t_n - t_prog)) = $((2 + m_n - m_prog)) ] &&
  [ "$t_dist" = "$m_dist" ] && [ "$m_dist" = "$m_sp" ] ||
  { echo "FAIL distinct: ties '$ties_row', median '$med_row'"; fail=1; }

if command -v llvm-mca-19 >/dev/null; then
  check mca 0 "$portent" bench predict --from "$tmp/a" --mca 2 --svg "$tmp/s4.svg"
  has mca "$tmp/out" "^summary: [1-9][0-9]* loop bodies"
  if [ "$(uname -m)" = x86_64 ]; then # the set's target CPU, not this host's, for the code and llvm-mca
    mkdir -p "$tmp/z2" && cp "$tmp/a/"* "$tmp/z2/"
    sed -i 's/"microarchitecture":[[:space:]]*"[^"]*"/"microarchitecture": "zen2"/' "$tmp/z2/target.json"
    check mca-cpu 0 "$portent" bench predict --from "$tmp/z2" --mca 1 --svg "$tmp/s10.svg"
    has mca-cpu "$tmp/out" "^llvm-mca-19 -mcpu=znver2 vs the simulator"
  fi
fi

# A second machine replays A's schedules: --cross pairs all of them, none skipped.
check replay 0 "$portent" bench predict --replay "$tmp/a" --min-time 0.001 --svg "$tmp/s6.svg" --save "$tmp/r" --json
has replay "$tmp/out" '"candidates": 3'
check cross-replay 0 "$portent" bench predict --cross "$tmp/a" "$tmp/r" --svg "$tmp/s7.svg"
has cross-replay "$tmp/out" "^matmul:32,24,40 *3 "
if grep -q "skipped" "$tmp/out"; then echo "FAIL cross-replay: candidates skipped"; fail=1; fi
check replay-missing 2 "$portent" bench predict --replay "$tmp/nothing"
# --measure-only: measured here, predicted from A's own profiles, which the saved set keeps
# (--sample 0.5 would make other profiles than A's 0.01 if this run profiled).
check measure-only 0 "$portent" bench predict --replay "$tmp/a" --measure-only --sample 0.5 --min-time 0.001 --svg "$tmp/s10.svg" --save "$tmp/m" --json
has measure-only "$tmp/out" '"candidates": 3'
gzip -dc "$tmp/a/profiles.jsonl.gz" >"$tmp/pa" && gzip -dc "$tmp/m/profiles.jsonl.gz" >"$tmp/pm"
cmp -s "$tmp/pa" "$tmp/pm" || { echo "FAIL measure-only: the saved profiles are not A's"; fail=1; }
# --restatic gives an older set's profiles today's static fields: saved without their parallel
# bodies' chunk work (as before session 9), they get it back and nothing else changes.
mkdir -p "$tmp/old" && cp "$tmp/a/target.json" "$tmp/a/records.jsonl" "$tmp/old/"
sed 's/,"chunks":{[^}]*}//g' "$tmp/pa" | gzip >"$tmp/old/profiles.jsonl.gz"
grep -q '"chunks"' "$tmp/pa" || { echo "FAIL restatic: no parallel body with chunk work in the set"; fail=1; }
check restatic 0 "$portent" bench predict --from "$tmp/old" --restatic --save "$tmp/old" --svg "$tmp/s11.svg"
has restatic "$tmp/err" "recomputed for 3 of 3 profiles"
gzip -dc "$tmp/old/profiles.jsonl.gz" >"$tmp/pr"
cmp -s "$tmp/pa" "$tmp/pr" || { echo "FAIL restatic: the profiles differ from the set's own"; fail=1; }
# --reprofile profiles a set's schedules again with today's analyzer, keeping its measured times:
# profiles whose reuse and counts were tampered with come back as the set's own (a one-thread
# profile is deterministic), the records untouched.
mkdir -p "$tmp/rp" && cp "$tmp/a/target.json" "$tmp/a/records.jsonl" "$tmp/rp/"
sed 's/"cold":[0-9.e+]*/"cold":1/g; s/"count_per_call":[0-9.e+]*/"count_per_call":7/g' "$tmp/pa" | gzip >"$tmp/rp/profiles.jsonl.gz"
gzip -dc "$tmp/rp/profiles.jsonl.gz" | cmp -s - "$tmp/pa" && { echo "FAIL reprofile: the tampered profiles equal the set's"; fail=1; }
check reprofile 0 "$portent" bench predict --from "$tmp/rp" --reprofile --save "$tmp/rp" --svg "$tmp/s12.svg"
has reprofile "$tmp/err" "made again for 3 of 3 profiles"
gzip -dc "$tmp/rp/profiles.jsonl.gz" | cmp -s - "$tmp/pa" || { echo "FAIL reprofile: the profiles differ from the set's own"; fail=1; }
cmp -s "$tmp/rp/records.jsonl" "$tmp/a/records.jsonl" || { echo "FAIL reprofile: the records changed"; fail=1; }
check reprofile-alone 2 "$portent" bench predict --reprofile --svg "$tmp/s13.svg"
# --tuned: the fastest schedules of a tuning log join the random ones as candidates 1000, 1001.
check tune-log 0 "$portent" tune $w --model random --trials 4 --log "$tmp/tune.jsonl" --min-time 0.001
check tuned 0 "$portent" bench predict $quick --candidates 1 --tuned "$tmp/tune.jsonl" --tuned-count 2 --save "$tmp/t" --json
has tuned "$tmp/out" '"candidates": 4'
has tuned-records "$tmp/t/records.jsonl" '"candidate": 1001'
check tuned-missing 2 "$portent" bench predict $quick --tuned "$tmp/nothing.jsonl"
has tuned-missing "$tmp/err" "nothing.jsonl"
check tuned-replay 2 "$portent" bench predict --replay "$tmp/a" --tuned "$tmp/tune.jsonl"
check measure-only-alone 2 "$portent" bench predict --measure-only
has measure-only-alone "$tmp/err" "needs --replay"

# B's records name schedules A has no profile for: skipped and said so.
head -n 1 "$tmp/a/records.jsonl" >"$tmp/one" && cp -r "$tmp/a" "$tmp/c" && cp "$tmp/one" "$tmp/c/records.jsonl"
check cross-subset 0 "$portent" bench predict --cross "$tmp/c" "$tmp/b" --svg "$tmp/s5.svg"
has cross-subset "$tmp/out" "have no profile in A: skipped"

# Sets with a workload the other lacks (issue 13 grew the Zen 4 set by three workloads): --cross
# pairs the shared workload and skips, and counts, the other's candidates.
v=matmul:16,16,16
check save-two 0 "$portent" bench predict --workloads $w,$v --candidates 2 --min-time 0.001 --svg "$tmp/s14.svg" --save "$tmp/two"
check cross-more-in-b 0 "$portent" bench predict --cross "$tmp/a" "$tmp/two" --svg "$tmp/s15.svg"
has cross-more-in-b "$tmp/out" "^$w *3 "
has cross-more-in-b "$tmp/out" "(3 of B's candidates have no profile in A: skipped)"
check cross-more-in-a 0 "$portent" bench predict --cross "$tmp/two" "$tmp/a" --svg "$tmp/s16.svg"
has cross-more-in-a "$tmp/out" "^$w *3 "
if grep -q "skipped" "$tmp/out"; then echo "FAIL cross-more-in-a: candidates skipped"; fail=1; fi

# scripts/predict_set_merge.py appends a set's new workload, leaving the old lines as they were.
if command -v python3 >/dev/null; then
  src=$(dirname "$0")/../..
  check save-new 0 "$portent" bench predict --workloads $v --candidates 1 --min-time 0.001 --svg "$tmp/s17.svg" --save "$tmp/newwl"
  cp -r "$tmp/a" "$tmp/grown"
  check merge 0 python3 "$src/scripts/predict_set_merge.py" "$tmp/grown" "$tmp/newwl"
  has merge "$tmp/out" "added 2 candidates"
  head -n 3 "$tmp/grown/records.jsonl" | cmp -s - "$tmp/a/records.jsonl" || { echo "FAIL merge: old records changed"; fail=1; }
  gzip -dc "$tmp/a/profiles.jsonl.gz" >"$tmp/pold"
  gzip -dc "$tmp/grown/profiles.jsonl.gz" | head -n 3 | cmp -s - "$tmp/pold" || { echo "FAIL merge: old profiles changed"; fail=1; }
  check merged 0 "$portent" bench predict --from "$tmp/grown" --svg "$tmp/s18.svg"
  has merged "$tmp/out" "^$w *3 "
  has merged "$tmp/out" "^$v *2 "
fi

# --merge-rounds: rounds of one set's schedules, measured one after another, become one set whose
# records hold each candidate's median over the rounds and every round's time; profiles are the
# rounds' (the replayed set's). Candidate 2 is missing from round 1 (a failed measurement: no
# record, no profile): the median of the two it has, null in its rounds, its profile from round
# 2. Round-to-round Spearman: r1-r2 and r1-r3 -1 over two, r2-r3 -0.5 over three: mean -0.833,
# least -1.
for k in 1 2 3; do mkdir -p "$tmp/round$k" && cp "$tmp/a/target.json" "$tmp/a/profiles.jsonl.gz" "$tmp/round$k/"; done
gzip -dc "$tmp/a/profiles.jsonl.gz" | grep -v '"candidate": 2,' | gzip >"$tmp/round1/profiles.jsonl.gz"
round_times() { # round_times ROUND C0 C1 C2 ("-": no record)
  r=$1; shift
  for c in 0 1 2; do
    [ "$1" = - ] || grep "\"candidate\": $c," "$tmp/a/records.jsonl" | sed "s/\"r\": \[\[[^]]*\]/\"r\": [[$1]/"
    shift
  done >"$tmp/round$r/records.jsonl"
}
round_times 1 0.005 0.003 - && round_times 2 0.001 0.002 0.003 && round_times 3 0.002 0.004 0.001
check rounds 0 "$portent" bench predict --merge-rounds "$tmp/round1,$tmp/round2,$tmp/round3" --save "$tmp/merged" --platform testbox
has rounds "$tmp/out" "^$w *3 *-0.833 *-1.000 "
has rounds "$tmp/err" "3 candidates, the median of 3 rounds (1 not measured in every round)"
has rounds-c0 "$tmp/merged/records.jsonl" '"r": \[\[0.002\], 0,.*"candidate": 0, .*"rounds": \[0.005, 0.001, 0.002\]}}$'
has rounds-c1 "$tmp/merged/records.jsonl" '"r": \[\[0.003\], 0,.*"candidate": 1, .*"rounds": \[0.003, 0.002, 0.004\]}}$'
has rounds-c2 "$tmp/merged/records.jsonl" '"r": \[\[0.002\], 0,.*"candidate": 2, .*"rounds": \[null, 0.003, 0.001\]}}$'
has rounds-platform "$tmp/merged/records.jsonl" '"platform": "testbox"'
gzip -dc "$tmp/merged/profiles.jsonl.gz" | cmp -s - "$tmp/pa" && cmp -s "$tmp/a/target.json" "$tmp/merged/target.json" ||
  { echo "FAIL rounds: target or profiles not the set's"; fail=1; }
check rounds-from 0 "$portent" bench predict --from "$tmp/merged" --svg "$tmp/s21.svg"
has rounds-from "$tmp/out" "^$w *3 "
# two real rounds of A's schedules (--replay --measure-only), merged and predicted
check round-real1 0 "$portent" bench predict --replay "$tmp/a" --measure-only --min-time 0.001 --svg "$tmp/s22.svg" --save "$tmp/rr1"
check round-real2 0 "$portent" bench predict --replay "$tmp/a" --measure-only --min-time 0.001 --svg "$tmp/s23.svg" --save "$tmp/rr2"
check rounds-real 0 "$portent" bench predict --merge-rounds "$tmp/rr1,$tmp/rr2" --save "$tmp/rr" --json
has rounds-real "$tmp/out" '"rounds": 2, "candidates": 3, "partial": 0'
if command -v python3 >/dev/null && ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/out"; then
  echo "FAIL rounds-real: --json is not JSON"; fail=1
fi
if grep -q '"clock"' "$tmp/rr/records.jsonl"; then echo "FAIL rounds-real: wall-clock rounds say a clock"; fail=1; fi
# --cpu-clock: the records say so, a merge keeps it and refuses rounds timed by the other clock
check round-cpu1 0 "$portent" bench predict --replay "$tmp/a" --measure-only --cpu-clock --min-time 0.001 --svg "$tmp/s25.svg" --save "$tmp/rc1"
check round-cpu2 0 "$portent" bench predict --replay "$tmp/a" --measure-only --cpu-clock --min-time 0.001 --svg "$tmp/s26.svg" --save "$tmp/rc2"
has round-cpu "$tmp/rc1/records.jsonl" '"threads": 1, "min_s": [0-9.e-]*, "repeats": [0-9]*, "clock": "cpu"}}$'
check rounds-cpu 0 "$portent" bench predict --merge-rounds "$tmp/rc1,$tmp/rc2" --save "$tmp/rc"
has rounds-cpu "$tmp/rc/records.jsonl" '"clock": "cpu", "rounds": \[[0-9.e-]*, [0-9.e-]*\]}}$'
check rounds-clocks 2 "$portent" bench predict --merge-rounds "$tmp/rc1,$tmp/rr1" --save "$tmp/m6"
has rounds-clocks "$tmp/err" "rr1: another clock than .*rc1's"
check rounds-real-from 0 "$portent" bench predict --from "$tmp/rr" --svg "$tmp/s24.svg"
has rounds-real-from "$tmp/out" "^$w *3 "
# not rounds of one set: other steps under a candidate's number, another target file, one round
cp -r "$tmp/round2" "$tmp/round4" && grep '"candidate": 0,' "$tmp/round2/records.jsonl" | sed 's/"candidate": 0,/"candidate": 1,/' >"$tmp/c1"
sed -i '/"candidate": 1,/d' "$tmp/round4/records.jsonl" && cat "$tmp/c1" >>"$tmp/round4/records.jsonl"
check rounds-clash 2 "$portent" bench predict --merge-rounds "$tmp/round1,$tmp/round4" --save "$tmp/m2"
has rounds-clash "$tmp/err" "#1 has other steps in .*round4"
cp -r "$tmp/round2" "$tmp/round5" && printf ' ' >>"$tmp/round5/target.json"
check rounds-target 2 "$portent" bench predict --merge-rounds "$tmp/round1,$tmp/round5" --save "$tmp/m3"
has rounds-target "$tmp/err" "round5: another target.json"
check rounds-one 2 "$portent" bench predict --merge-rounds "$tmp/round1" --save "$tmp/m4"
has rounds-one "$tmp/err" "two rounds or more"
check rounds-missing 2 "$portent" bench predict --merge-rounds "$tmp/round1,$tmp/nothing" --save "$tmp/m5"
has rounds-missing "$tmp/err" "round 2: .*nothing/records.jsonl"
check rounds-nosave 2 "$portent" bench predict --merge-rounds "$tmp/round1,$tmp/round2"
has rounds-nosave "$tmp/err" "needs --save"
[ ! -e "$tmp/m2" ] && [ ! -e "$tmp/m3" ] && [ ! -e "$tmp/m6" ] || { echo "FAIL rounds: a refused merge wrote a set"; fail=1; }

# Broken sets: exit 2 with the file named.
cp -r "$tmp/a" "$tmp/d" && printf 'not gzip' >"$tmp/d/profiles.jsonl.gz"
check corrupt-profiles 2 "$portent" bench predict --from "$tmp/d"
has corrupt-profiles "$tmp/err" "profiles.jsonl.gz"
cp -r "$tmp/a" "$tmp/e" && sed -i 's/"portent": {[^}]*}/"x": 1/' "$tmp/e/records.jsonl"
check no-extras 2 "$portent" bench predict --from "$tmp/e"
has no-extras "$tmp/err" "records.jsonl:1: no \"portent\""
cp -r "$tmp/a" "$tmp/f" && printf '{"version": 99}' >"$tmp/f/target.json"
check bad-target 2 "$portent" bench predict --cross "$tmp/a" "$tmp/f"
has bad-target "$tmp/err" "target.json"
check missing 2 "$portent" bench predict --from "$tmp/nothing"
has missing "$tmp/err" "nothing/records.jsonl"
check usage 2 "$portent" bench predict --worst -1
check bench-threads0 2 "$portent" bench predict --threads 0
check bench-timeout0 2 "$portent" bench predict --timeout 0
has bench-timeout0 "$tmp/err" "--timeout > 0"

# portent predict on bad inputs: a thread count of 0 or above the target's cores, a corrupted
# or unknown-version profile or target: exit 2, naming what was wrong.
check analyze 0 "$portent" analyze $w -o "$tmp/p.json"
# 56-lane masked gathers and scatters (conv_r50_2's random candidate 17, at 4 channels): LLVM 19
# gave the instrumented module's AVX-512 gather its index register as destination (SIGILL)
# until the analyzer's JIT scalarized them (analyzer/run.c)
check analyze-gathers 0 "$portent" analyze conv2d_nchw:1,4,56,56,4,3,3,1,1 --threads 1 --sample 0.01 --timeout 600 \
  --steps '[["CI", 1], ["RE", 3, [1, 6, 4, 3, 5, 0, 2]], ["AN", 3, 6, 2], ["AN", 3, 1, 1]]' -o "$tmp/g.json"
check predict 0 "$portent" predict --target amd-zen2 "$tmp/p.json" --threads 64
has predict "$tmp/out" "model: steady-state +bandwidth +overlap +strides +carried +lanes +sets +shared"
check predict-model 0 "$portent" predict --target amd-zen2 "$tmp/p.json" --model steady+bw-assoc
has predict-model "$tmp/out" "model: steady-state +bandwidth -assoc"
check threads0 2 "$portent" predict --target amd-zen2 "$tmp/p.json" --threads 0
has threads0 "$tmp/err" "positive integer"
check threads-over 2 "$portent" predict --target amd-zen2 "$tmp/p.json" --threads 65
has threads-over "$tmp/err" "has 64 cores"
head -c 300 "$tmp/p.json" >"$tmp/cut.json"
check cut-profile 2 "$portent" predict --target amd-zen2 "$tmp/cut.json"
has cut-profile "$tmp/err" "cut.json"
sed 's/"version":1/"version":42/; s/"version": 1/"version": 42/' "$tmp/p.json" >"$tmp/v42.json"
check profile-version 2 "$portent" predict --target amd-zen2 "$tmp/v42.json"
has profile-version "$tmp/err" "version"
sed '0,/"version": 1/s//"version": 42/' targets/amd-zen2.json >"$tmp/t42.json"
check target-version 2 "$portent" predict --target "$tmp/t42.json" "$tmp/p.json"
has target-version "$tmp/err" "t42.json"
head -c 2000 targets/amd-zen2.json >"$tmp/tcut.json"
check target-cut 2 "$portent" predict --target "$tmp/tcut.json" "$tmp/p.json"
has target-cut "$tmp/err" "tcut.json"
exit $fail
