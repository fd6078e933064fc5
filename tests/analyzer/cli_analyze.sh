#!/bin/sh
# portent analyze end to end: a profile written atomically and byte-identical across runs,
# exit 1 and no file when the kernel crashes, exit 2 with LLVM's position for malformed IR.
# usage: cli_analyze.sh PORTENT KERNEL_DIR FIXTURE_DIR
set -u
P=$1 K=$2 F=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" -o "$T/a.json" > "$T/out.txt" || fail "analyze gemm exited $?"
grep -q '"version":1' "$T/a.json" || fail "no version field"
grep -q 'gemm .* 3 loops (3 static trip counts)' "$T/out.txt" || fail "summary: $(cat "$T/out.txt")"
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" -o "$T/b.json" > /dev/null || fail "second run"
cmp -s "$T/a.json" "$T/b.json" || fail "two runs with one seed differ"
# Reuse traced without running (every iteration): the run's histogram, counts static. Not its
# per-set bins: the trace places each buffer at the start of its own region, the run ends it at
# a page boundary, so their lines fall in other sets (docs/formats.md, "sets").
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --reuse trace --trace-share 1 -o "$T/tr.json" > "$T/tr.txt" ||
  fail "--reuse trace exited $?"
grep -q 'counts static' "$T/tr.txt" || fail "--reuse trace summary: $(cat "$T/tr.txt")"
grep -q '"trace_share":1' "$T/tr.json" || fail "--reuse trace: no trace_share"
nosets() { grep -o '"total":{[^}]*}' "$1" | sed 's/,"sets":\[[^]]*\]//'; }
grep -q '"total":{[^}]*"sets":\[' "$T/tr.json" || fail "--reuse trace: no per-set bins"
[ "$(nosets "$T/tr.json")" = "$(nosets "$T/a.json")" ] ||
  fail "--reuse trace: $(nosets "$T/tr.json") vs the run's $(nosets "$T/a.json")"
# The windowed run measuring every access: the run's histogram too; with the default windows
# the same access count (gemm's blocks all have the same accesses per execution).
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --reuse windows --trace-share 1 -o "$T/w1.json" > /dev/null ||
  fail "--reuse windows exited $?"
grep -q '"window_share":1' "$T/w1.json" || fail "--reuse windows: no window_share"
[ "$(grep -o '"total":{[^}]*}' "$T/w1.json")" = "$(grep -o '"total":{[^}]*}' "$T/a.json")" ] ||
  fail "--reuse windows: $(grep -o '"total":{[^}]*}' "$T/w1.json") vs the run's $(grep -o '"total":{[^}]*}' "$T/a.json")"
# The line filter at rate 1: every access and first touch kept (repeats counted beside the tracker).
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --line-filter -o "$T/lf.json" > /dev/null || fail "--line-filter exited $?"
grep -q '"line_filter":true' "$T/lf.json" || fail "--line-filter: no line_filter field"
tot() { grep -o '"total":{[^}]*}' "$1" | grep -o '"cold":[-0-9.e+]*,"accesses":[-0-9.e+]*'; }
[ -n "$(tot "$T/a.json")" ] && [ "$(tot "$T/lf.json")" = "$(tot "$T/a.json")" ] ||
  fail "--line-filter: $(tot "$T/lf.json") vs the run's $(tot "$T/a.json")"
# The address skeleton: the same file, the summary says how much was left out; where a branch
# depends on loaded floats the whole module runs and the summary says why.
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --addresses-only -o "$T/sk.json" > "$T/sk.txt" ||
  fail "--addresses-only exited $?"
cmp -s "$T/a.json" "$T/sk.json" || fail "--addresses-only: the profile differs from the whole module's"
grep -q 'addresses only: [1-9][0-9]* instructions left out' "$T/sk.txt" || fail "--addresses-only summary: $(cat "$T/sk.txt")"
echo '{"entry":"relu_branch","args":[{"kind":"buffer","type":"f32","count":512},{"kind":"buffer","type":"f32","count":512}]}' > "$T/relu.json"
"$P" analyze "$F/skeleton_branch.ll" --spec "$T/relu.json" --addresses-only -o "$T/skb.json" > "$T/skb.txt" ||
  fail "--addresses-only on skeleton_branch.ll exited $?"
grep -q 'addresses only: not applied, the whole module ran (a floating-point value loaded' "$T/skb.txt" ||
  fail "--addresses-only on a branch on data: $(cat "$T/skb.txt")"
# Per-set bins for LL set counts (--llc-sets): added beside an otherwise unchanged profile, the
# windowed run measuring every access gives the same; bad counts and sampled runs exit 2.
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --llc-sets 1024,128 -o "$T/llc.json" > /dev/null ||
  fail "--llc-sets exited $?"
grep -q '"total":{[^}]*"llc_sets":\[{"sets":1024,"bins":\[[^]]*\]},{"sets":128,"bins":\[' "$T/llc.json" ||
  fail "--llc-sets: no llc_sets in the total"
sed 's/,"llc_sets":\[\({"sets":[0-9]*,"bins":\[[^]]*\]},*\)*\]//g' "$T/llc.json" > "$T/llc_stripped.json"
cmp -s "$T/llc_stripped.json" "$T/a.json" || fail "--llc-sets changed the rest of the profile"
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --llc-sets 1024,128 --reuse windows --trace-share 1 -o "$T/llcw.json" \
  > /dev/null || fail "--llc-sets --reuse windows exited $?"
llc() { grep -o '"llc_sets":\[\({"sets":[0-9]*,"bins":\[[^]]*\]},*\)*\]' "$1"; }
[ -n "$(llc "$T/llc.json")" ] && [ "$(llc "$T/llcw.json")" = "$(llc "$T/llc.json")" ] ||
  fail "--llc-sets --reuse windows: llc bins differ from the run's"
for bad in 1000 64 65536 1024,1024 0x400 "1024," 128,256,512,1024,2048; do
  "$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --llc-sets "$bad" -o "$T/x.json" 2> "$T/err.txt"
  rc=$?
  [ $rc -eq 2 ] && grep -q -- '--llc-sets' "$T/err.txt" || fail "--llc-sets $bad: exit $rc, $(cat "$T/err.txt")"
done
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --llc-sets 1024 --sample 0.01 -o "$T/x.json" 2> "$T/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q -- '--llc-sets.*--sample' "$T/err.txt" || fail "--llc-sets with --sample: exit $rc, $(cat "$T/err.txt")"
[ ! -e "$T/x.json" ] || fail "a profile was written for a refused --llc-sets"
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" --reuse bogus > /dev/null 2>&1
[ $? -eq 2 ] || fail "--reuse bogus: want exit 2"
# A stack-allocated local buffer: the same bytes in separate processes (stack starts differ).
for i in 1 2 3; do
  "$P" analyze "$F/local.ll" --spec "$F/local_spec.json" -o "$T/l$i.json" > /dev/null || fail "local.ll run $i"
done
cmp -s "$T/l1.json" "$T/l2.json" && cmp -s "$T/l1.json" "$T/l3.json" || fail "local.ll profiles differ between runs"
# A sampled profile over 2 threads whose parallel body keeps a buffer on the worker's stack:
# byte-identical between runs (the workers' stacks are mapped at fixed addresses).
for i in 1 2 3 4; do
  "$P" analyze "$F/parallel_local.ll" --spec "$F/parallel_local_spec.json" --sample 0.05 -o "$T/pl$i.json" > /dev/null ||
    fail "parallel_local.ll run $i"
done
for i in 2 3 4; do cmp -s "$T/pl1.json" "$T/pl$i.json" || fail "parallel_local.ll: sampled 2-thread profiles differ"; done
grep -q '"threads":2' "$T/pl1.json" || fail "parallel_local.ll did not run on 2 threads"
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" -o "$T/s.json" --sample 0.5 --json > "$T/s.txt" || fail "sampled"
grep -q '"sample_rate": 0.5' "$T/s.txt" || fail "sampled summary: $(cat "$T/s.txt")"
# Sampling hashes line addresses: buffers sit at the same addresses in every process.
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" -o "$T/s2.json" --sample 0.5 --window 0 > /dev/null || fail "plain SHARDS"
"$P" analyze "$K/gemm.ll" --spec "$F/gemm_spec.json" -o "$T/s3.json" --sample 0.5 --window 0 > /dev/null || fail "plain SHARDS"
cmp -s "$T/s2.json" "$T/s3.json" || fail "two sampled runs with one seed differ"
"$P" analyze "$K/gemm.ll" > "$T/static.json" || fail "static profile"
grep -q '"counts_source":"none"' "$T/static.json" || fail "static profile counts_source"
# Counts without running equal the instrumented run's, for a parallel kernel over 3 threads.
"$P" analyze "matmul:40,24,36" --threads 3 --static-counts -o "$T/sc.json" > "$T/sc.txt" || fail "--static-counts"
grep -q 'counts static' "$T/sc.txt" || fail "--static-counts summary: $(cat "$T/sc.txt")"
"$P" analyze "matmul:40,24,36" --threads 3 --no-reuse -o "$T/ic.json" > /dev/null || fail "instrumented counts"
for f in sc ic; do
  sed -e 's/"counts_source":"[a-z]*"//' -e 's/"seed":[0-9]*//' -e 's/"static_count_per_call":[-0-9.e+]*//g' "$T/$f.json" > "$T/$f.cmp"
done
cmp -s "$T/sc.cmp" "$T/ic.cmp" || fail "static and instrumented counts differ"

"$P" analyze "$F/crash.ll" --spec "$F/crash_spec.json" -o "$T/c.json" 2> "$T/err.txt"
rc=$?
[ $rc -eq 1 ] || fail "crash: exit $rc, want 1"
grep -q 'kernel crashed (SIGSEGV)' "$T/err.txt" || fail "crash message: $(cat "$T/err.txt")"
[ ! -e "$T/c.json" ] || fail "a profile was written for a crashed run"
ls "$T" | grep -q tmp && fail "a temporary file was left behind"

printf 'define void @f() {\n  ret i32 0\n}\n' > "$T/bad.ll"
"$P" analyze "$T/bad.ll" -o "$T/d.json" 2> "$T/err.txt"
rc=$?
[ $rc -eq 2 ] || fail "malformed IR: exit $rc, want 2"
grep -q 'bad.ll:2:' "$T/err.txt" || fail "malformed IR message: $(cat "$T/err.txt")"
"$P" analyze "$K/gemm.ll" --sample 2 2> /dev/null
[ $? -eq 2 ] || fail "--sample 2 accepted"
echo ok
