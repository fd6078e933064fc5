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
# validation as whole training networks: densenet121's three tasks of the sample
check split-valnet 0 "$portent" dataset split --data $sample --by-network --val-networks densenet121 -o "$tmp/split2.json"
has split-valnet "$tmp/out" "test networks' tasks: 3 held out; validation: 3; training: 4"
check split-valnet-test 2 "$portent" dataset split --data $sample --by-network --val-networks bert_tiny -o "$tmp/split3.json"
has split-valnet-test "$tmp/err" "bert_tiny is a test network"

# remeasure: the sample's programs measured again here (resumable, no program twice); compare
# joins the two logs; a broken line of the source log is named and skipped. The records keep the
# sample's target string (it was made on a Zen 5; this machine may be another generation).
sample_target=$(grep -o '"llvm -keys=cpu[^"]*"' $sample | head -1 | tr -d '"')
check remeasure 0 "$portent" dataset remeasure --from $sample --log "$tmp/r.jsonl" --limit 5 --min-time 0 --target "$sample_target"
check remeasure-resume 0 "$portent" dataset remeasure --from $sample --log "$tmp/r.jsonl" --limit 5 --min-time 0 --target "$sample_target"
has remeasure-resume "$tmp/out" "5 already in"
n3=$(lines "$tmp/r.jsonl")
[ "$n3" -eq 10 ] || { echo "FAIL remeasure: $n3 records, expected 10"; fail=1; }
distinct=$(sed 's/"r": .*//' "$tmp/r.jsonl" | sort -u | wc -l | tr -d ' ')
[ "$distinct" -eq 10 ] || { echo "FAIL remeasure: $distinct distinct programs of 10"; fail=1; }
first=$(sed 's/"r": .*//' "$tmp/r.jsonl" | head -1)
grep -qF -- "$first" $sample || { echo "FAIL remeasure: a measured program is not one of the source log's"; fail=1; }
check merge-combine 0 "$portent" dataset merge --combine -o "$tmp/c.jsonl" $sample "$tmp/r.jsonl"
has merge-combine "$tmp/out" "duplicates combined"
programs=$(sed 's/"r": .*//' $sample | sort -u | wc -l | tr -d ' ')
[ "$(lines "$tmp/c.jsonl")" -eq "$programs" ] || { echo "FAIL merge-combine: not one record per program"; fail=1; }
two=$(grep -c '"r": \[\[[-0-9.e]*, [-0-9.e]*' "$tmp/c.jsonl")
[ "$two" -ge 10 ] || { echo "FAIL merge-combine: $two records with two costs, expected the 10 remeasured"; fail=1; }
check compare 0 "$portent" dataset compare $sample "$tmp/r.jsonl" --min-per-task 2
has compare "$tmp/out" "spearman"
check compare-none 1 "$portent" dataset compare $sample "$tmp/n.jsonl"
check compare-missing 2 "$portent" dataset compare $sample "$tmp/absent.jsonl"
{ head -3 $sample; echo '{"i": [["[\"dense\"'; } >"$tmp/broken.jsonl"
check remeasure-broken 0 "$portent" dataset remeasure --from "$tmp/broken.jsonl" --log "$tmp/r2.jsonl" --min-time 0
has remeasure-broken "$tmp/err" "broken.jsonl:4"
n4=$(lines "$tmp/r2.jsonl")
[ "$n4" -eq 3 ] || { echo "FAIL remeasure-broken: $n4 records, expected 3"; fail=1; }

models=analytic,xgb,tlp,mtl
[ "${PORTENT_TEST_QUICK:-0}" = 1 ] && models=xgb,tlp
check bench-learn 0 "$portent" bench learn --data $sample --quick --models $models
has bench-learn "$tmp/out" "random (expectation)"
has bench-learn "$tmp/out" "^tlp  "
has bench-learn "$tmp/out" "^xgb  "
has bench-learn "$tmp/out" "OpenBLAS [A-Za-z0-9]* on [0-9]* threads*): [0-9]* candidates/s"
has bench-learn "$tmp/out" "bert_tiny"
case $models in *mtl*) has bench-learn "$tmp/out" "^mtl-tlp 20% +2 aux (3 tasks)" ;; esac
# From another directory: the default target files are the shipped ones, found wherever it runs.
elsewhere() { (cd "$tmp" && "$@"); }
check bench-learn-elsewhere 0 elsewhere "$portent" bench learn --data "$PWD/$sample" --quick --models analytic,mtl \
  --fractions 0.2 --rows "+1 aux"
has bench-learn-elsewhere "$tmp/out" "^analytic  .* 0\.[0-9]"
has bench-learn-elsewhere "$tmp/out" "^mtl-tlp 20% +1 aux (2 tasks)  "
has bench-learn-elsewhere "$tmp/err" "OpenBLAS core: "
# A target file that cannot be read stops the run before any training, naming it.
check bench-learn-badaux 2 "$portent" bench learn --data $sample --quick --models xgb,mtl --aux-targets "$tmp/absent.json"
has bench-learn-badaux "$tmp/err" "absent.json"
if grep -q "trained" "$tmp/err"; then echo "FAIL bench-learn-badaux: a model trained before the error"; fail=1; fi
# A zero latency and a NaN one (JSON has no NaN: its line is no record) are counted and left out.
awk 'NR == 5 { sub(/"r": \[\[[0-9.e-]*\]/, "\"r\": [[0]") } NR == 13 { sub(/"r": \[\[[0-9.e-]*\]/, "\"r\": [[NaN]") } { print }' \
  $sample >"$tmp/nz.jsonl"
check bench-learn-nan 0 "$portent" bench learn --data "$tmp/nz.jsonl" --quick --models xgb,tlp
has bench-learn-nan "$tmp/err" "79 records (1 failed or unusable, 0 of other targets; 1 unreadable lines skipped)"
has bench-learn-nan "$tmp/out" "^tlp  "
# One training task (the sample's max_pool2d) beside the test tasks: every model trains and scores.
grep -e '1280, 7, 7, 7' -e '2048, 7, 7, 7' -e 'dense\\", 1, 128, 128' -e 'max_pool2d' $sample >"$tmp/one.jsonl"
check bench-learn-onetask 0 "$portent" bench learn --data "$tmp/one.jsonl" --quick --models xgb,tlp,mtl --fractions 0.2
has bench-learn-onetask "$tmp/err" "3 test tasks, 0 validation, 1 training"
has bench-learn-onetask "$tmp/out" "^tlp  "
has bench-learn-onetask "$tmp/out" "^mtl-tlp 20% +2 aux (3 tasks)  "
check bench-learn-seeds 0 "$portent" bench learn --data $sample --quick --models tlp --seeds 2 --task-batches --clip 0.5
has bench-learn-seeds "$tmp/out" "^tlp seed 1 "
has bench-learn-seeds "$tmp/out" "^tlp seed 2 "
has bench-learn-seeds "$tmp/out" "^tlp x2 seeds "
# --val-networks: the same held-out networks; xgb's rows per seed are equal (no row or column
# sampling in Ansor's parameters, so XGBoost's seed changes nothing)
check bench-learn-valnet 0 "$portent" bench learn --data $sample --quick --models xgb,xgb-imp --seeds 2 --val-networks densenet121
has bench-learn-valnet "$tmp/err" "3 test tasks, 3 validation, 4 training"
has bench-learn-valnet "$tmp/out" "w = occurrences in the validation networks"
for m in xgb xgb-imp; do
  x1=$(grep "^$m seed 1 " "$tmp/out" | sed "s/^$m seed 1 *[0-9.]* //")
  x2=$(grep "^$m seed 2 " "$tmp/out" | sed "s/^$m seed 2 *[0-9.]* //")
  [ -n "$x1" ] && [ "$x1" = "$x2" ] || { echo "FAIL bench-learn-valnet: $m's seeds differ: '$x1' / '$x2'"; fail=1; }
done
check bench-learn-valnet-test 2 "$portent" bench learn --data $sample --quick --val-networks resnet50
has bench-learn-valnet-test "$tmp/err" "resnet50 is a test network"
check bench-learn-seeds0 2 "$portent" bench learn --data $sample --quick --seeds 0
check bench-learn-auxw 2 "$portent" bench learn --data $sample --quick --aux-weight -1
check bench-learn-aux1 2 "$portent" bench learn --data $sample --quick --aux-per-task 1
has bench-learn-aux1 "$tmp/err" "at least 2"
check bench-learn-nodata 2 "$portent" bench learn --quick
check bench-learn-notest 2 "$portent" bench learn --quick --data "$tmp/n.jsonl" --models xgb
# Two real platforms: the sample's programs again under a znver4 target with the same latencies, so
# the other platform's measured latencies rank the ranked one's perfectly (top-1 exactly 1).
sed 's/-mcpu=znver5/-mcpu=znver4/' $sample >"$tmp/zen4.jsonl"
check bench-learn-2p 0 "$portent" bench learn --data $sample --data "$tmp/zen4.jsonl" --platform znver4 --quick \
  --models mtl,transfer --fractions 0.2,1 --aux-targets targets/intel-skylake-sp.json --per-task
has bench-learn-2p "$tmp/out" "top-1 per test task"
has bench-learn-2p "$tmp/err" "target 'llvm -keys=cpu -mcpu=znver4'"
has bench-learn-2p "$tmp/err" "other platform 'llvm -keys=cpu -mcpu=znver5': [1-9][0-9]* of the ranked candidates"
for row in "tlp 20% " "mtl-tlp 20% real (2 tasks)" "mtl-tlp 20% +1 aux (3 tasks)" "tlp 100% " \
  "mtl-tlp 100% real (2 tasks)" "mtl-tlp 100% +1 aux (3 tasks)" "tlp on znver5 alone"; do
  has bench-learn-2p "$tmp/out" "^$row"
done
has bench-learn-2p "$tmp/out" "^measured on znver5 *- *1.0000 .* 1.0000$"
# task-mean 1 (the last column) is the mean of the model's column of the per-task table
for row in "tlp 20%" "mtl-tlp 20% real (2 tasks)"; do
  col=$(grep -F "= $row" "$tmp/out" | sed 's/^ *m\([0-9]*\) = .*/\1/')
  mean=$(awk -v c="$col" '/^\[/ { split(substr($0, 49), f, " "); s += f[5 + c]; n++ } END { if (n) printf "%.4f", s / n }' "$tmp/out")
  table=$(grep -F "$row " "$tmp/out" | head -1 | awk '{ print $NF }')
  awk -v a="$mean" -v b="$table" 'BEGIN { d = a - b; exit !(a != "" && d < 0.001 && d > -0.001) }' ||
    { echo "FAIL bench-learn-2p: $row's task-mean $table, its per-task column averages '$mean'"; fail=1; }
done
# --rows: only the MTL-TLP rows named so (a long run split in parts)
check bench-learn-rows 0 "$portent" bench learn --data $sample --data "$tmp/zen4.jsonl" --platform znver4 --quick \
  --models mtl --fractions 0.2 --aux-targets '' --rows real
has bench-learn-rows "$tmp/out" "^mtl-tlp 20% real (2 tasks)"
if grep -q "^tlp 20% " "$tmp/out"; then echo "FAIL bench-learn-rows: a row --rows leaves out ran"; fail=1; fi
# --thin-block, --warm-epochs, --other-heads: the 20% drawn in pairs per task, the znver4 head started
# from znver5's, and rows scored by the znver5 head and by both
check bench-learn-warm 0 "$portent" bench learn --data $sample --data "$tmp/zen4.jsonl" --platform znver4 --quick \
  --models mtl --fractions 0.2 --aux-targets '' --rows real --thin-block 2 --warm-epochs 1 --other-heads
has bench-learn-warm "$tmp/out" "^mtl-tlp 20% real (2 tasks) "
has bench-learn-warm "$tmp/out" "^mtl-tlp 20% real (2 tasks) h:other "
has bench-learn-warm "$tmp/out" "^mtl-tlp 20% real (2 tasks) h:both "
# Three real platforms (issue 15's 2 and 3 tasks; Zen 3, Zen 4 and Zen 5 measured the same programs,
# session 19): every platform in the records is a head of MTL-TLP, whichever is ranked
sed 's/-mcpu=znver5/-mcpu=znver3/' $sample >"$tmp/zen3.jsonl"
for p in znver4 znver3; do
  check bench-learn-3p-$p 0 "$portent" bench learn --data $sample --data "$tmp/zen4.jsonl" --data "$tmp/zen3.jsonl" \
    --platform $p --quick --models mtl --fractions 0.2 --aux-targets '' --rows real
  has bench-learn-3p-$p "$tmp/out" "^mtl-tlp 20% real (3 tasks) "
  has bench-learn-3p-$p "$tmp/err" "target 'llvm -keys=cpu -mcpu=$p'"
  has bench-learn-3p-$p "$tmp/err" "mtl-tlp 20% real (3 tasks) (seed 1) trained on 3 platform(s)"
done
# --thin-spread, --aux-per-task all, --aux-missing, --aux-cache: the 20% as an exact count dealt out in
# pairs; the analytic labels of every training schedule, or of those the other platform (here half the
# sample) did not measure, saved under names that say so, and read back by the next run
awk 'NR % 2' $sample >"$tmp/half5.jsonl"
spread() {
  "$portent" bench learn --data "$tmp/half5.jsonl" --data "$tmp/zen4.jsonl" --platform znver4 --quick --models mtl \
    --fractions 0.2 --aux-targets targets/zen5-epyc-2c.json --rows aux --aux-per-task all --aux-cache "$tmp" \
    --thin-spread 2 "$@"
}
check bench-learn-spread 0 spread --aux-missing
has bench-learn-spread "$tmp/out" "^mtl-tlp 20% +1 aux (3 tasks) "
awk '/keeps [0-9]+ of [0-9]+ labels/ { for (i = 1; i < NF; i++) if ($i == "keeps") { k = $(i + 1); n = $(i + 3) } }
  END { exit !(n > 0 && k == int(0.2 * n + 0.5)) }' "$tmp/err" ||
  { echo "FAIL bench-learn-spread: the spread draw does not keep round(20%) of the labels"; fail=1; }
missing=$(lines "$tmp/zen5-epyc-2c-analytic-all-missing.jsonl")
check bench-learn-spread-all 0 spread
all=$(lines "$tmp/zen5-epyc-2c-analytic-all.jsonl")
[ "$missing" -gt 0 ] && [ "$all" -gt "$missing" ] ||
  { echo "FAIL bench-learn-spread: $missing labels where the other platform measured nothing, $all in all"; fail=1; }
if grep -q " h:aux" "$tmp/out"; then echo "FAIL bench-learn-spread: an h:aux row without --aux-heads"; fail=1; fi
# --aux-heads: the same trained model scored by the analytic head, and by the ranked head plus it
check bench-learn-spread-cached 0 spread --aux-heads
has bench-learn-spread-cached "$tmp/err" "read from $tmp/zen5-epyc-2c-analytic-all.jsonl"
has bench-learn-spread-cached "$tmp/out" "^mtl-tlp 20% +1 aux (3 tasks) h:aux "
has bench-learn-spread-cached "$tmp/out" "^mtl-tlp 20% +1 aux (3 tasks) h:+aux "
check bench-learn-spread-bad 2 "$portent" bench learn --data $sample --quick --thin-spread -2
check bench-learn-warm-bad 2 "$portent" bench learn --data $sample --quick --warm-epochs 3
check bench-learn-thin-bad 2 "$portent" bench learn --data $sample --quick --thin-block -1
check bench-learn-noplatform 2 "$portent" bench learn --data $sample --quick --platform znver3 --models xgb
has bench-learn-noplatform "$tmp/err" "znver3: no record of it (the records' platforms: znver5)"
check bench-learn-fractions 2 "$portent" bench learn --data $sample --quick --fractions 0.2,1.5
# --avg-rows: the same training scored with its parameters averaged over its last K epochs, avg1 the
# last epoch's (the plain row); --avg-epochs 3 makes avg3 the plain row. The columns after train s.
row() { grep "^$1  " "$tmp/out" | head -1 | sed "s/^$1 *[0-9.]* //"; }
check bench-learn-avg-rows 0 "$portent" bench learn --data $sample --quick --models tlp --avg-rows 1,3
a1=$(row "tlp avg1 seed 1"); a3=$(row "tlp avg3 seed 1"); plain=$(row "tlp")
[ -n "$a1" ] && [ "$a1" = "$plain" ] || { echo "FAIL bench-learn-avg-rows: avg1 '$a1' is not the last epoch's '$plain'"; fail=1; }
check bench-learn-avg 0 "$portent" bench learn --data $sample --quick --models tlp --avg-epochs 3
[ -n "$a3" ] && [ "$(row "tlp")" = "$a3" ] || { echo "FAIL bench-learn-avg: '$(row "tlp")' is not avg3's '$a3'"; fail=1; }
check bench-learn-avg-bad 2 "$portent" bench learn --data $sample --quick --avg-rows 1,4
check bench-learn-avg-bad2 2 "$portent" bench learn --data $sample --quick --avg-epochs -1
check bench-learn-power 0 "$portent" bench learn --data $sample --quick --models tlp --label-power 2
has bench-learn-power "$tmp/out" "^tlp  "
check bench-learn-power-bad 2 "$portent" bench learn --data $sample --quick --label-power 0
# --ndcg-k / --gain-scale: TLP's values give the plain row to the digit (test_tlp checks that others
# train another model; on this sample's few tasks the rows can coincide)
check bench-learn-rank-tlp 0 "$portent" bench learn --data $sample --quick --models tlp --ndcg-k 0 --gain-scale 1
[ -n "$plain" ] && [ "$(row "tlp")" = "$plain" ] || { echo "FAIL bench-learn-rank-tlp: '$(row "tlp")' is not '$plain'"; fail=1; }
check bench-learn-rank 0 "$portent" bench learn --data $sample --quick --models tlp --ndcg-k 2 --gain-scale 4
has bench-learn-rank "$tmp/out" "^tlp  "
check bench-learn-rank-bad 2 "$portent" bench learn --data $sample --quick --ndcg-k 2x
has bench-learn-rank-bad "$tmp/err" "bench learn: --ndcg-k wants a whole number >= 0 (0: the whole list), not '2x'"
check bench-learn-gain-bad 2 "$portent" bench learn --data $sample --quick --gain-scale -1
has bench-learn-gain-bad "$tmp/err" "gain-scale wants a number in (0, 64]"
# The TLP row trains on whole tasks by default since session 17 (--task-batches is that row);
# --mixed-batches is TLP's reference mix, another model.
check bench-learn-tb 0 "$portent" bench learn --data $sample --quick --models tlp --task-batches
[ -n "$plain" ] && [ "$(row "tlp")" = "$plain" ] || { echo "FAIL bench-learn-tb: '$(row "tlp")' is not the default '$plain'"; fail=1; }
check bench-learn-mixed 0 "$portent" bench learn --data $sample --quick --models tlp --mixed-batches
[ -n "$(row "tlp")" ] && [ "$(row "tlp")" != "$plain" ] || { echo "FAIL bench-learn-mixed: '$(row "tlp")' is the default row"; fail=1; }
# --emb 22: TLP's features, without the loop extents each step makes or names replayed on the workload
# (the default since session 21), train another model; --emb 26 is the plain row to the digit.
check bench-learn-emb 0 "$portent" bench learn --data $sample --quick --models tlp --emb 26
[ -n "$plain" ] && [ "$(row "tlp")" = "$plain" ] || { echo "FAIL bench-learn-emb: '$(row "tlp")' is not '$plain'"; fail=1; }
check bench-learn-emb22 0 "$portent" bench learn --data $sample --quick --models tlp --emb 22
[ -n "$(row "tlp")" ] && [ "$(row "tlp")" != "$plain" ] || { echo "FAIL bench-learn-emb22: '$(row "tlp")' is the plain row"; fail=1; }
check bench-learn-emb-bad 2 "$portent" bench learn --data $sample --quick --emb 27
# --pretrain: the sample's own programs under an analytic platform's name stand in for the extra
# programs; only the training tasks' are used; 0 epochs of them give the plain row to the digit.
sed 's/-mcpu=znver5/-mcpu=zen5-epyc-2c-analytic/' $sample >"$tmp/pre.jsonl"
check bench-learn-pretrain0 0 "$portent" bench learn --data $sample --quick --models tlp --pretrain "$tmp/pre.jsonl" \
  --pretrain-epochs 0
[ -n "$plain" ] && [ "$(row "tlp")" = "$plain" ] || { echo "FAIL bench-learn-pretrain0: '$(row "tlp")' is not '$plain'"; fail=1; }
check bench-learn-pretrain 0 "$portent" bench learn --data $sample --quick --models tlp --pretrain "$tmp/pre.jsonl"
has bench-learn-pretrain "$tmp/err" "pre-training on [1-9][0-9]* programs of [1-9][0-9]* training tasks from .*pre.jsonl ([1-9][0-9]* on workloads that are no training task, not used), 5 epochs"
[ "$(row "tlp")" != "$plain" ] || { echo "FAIL bench-learn-pretrain: the row is the plain one"; fail=1; }
check bench-learn-pretrain-bad 2 "$portent" bench learn --data $sample --quick --pretrain-epochs 3
has bench-learn-pretrain-bad "$tmp/err" "pretrain-epochs needs --pretrain"
check bench-learn-tw 0 "$portent" bench learn --data $sample --quick --models tlp --train-weights time
has bench-learn-tw "$tmp/out" "^tlp  "
check bench-learn-tw-bad 2 "$portent" bench learn --data $sample --quick --train-weights flops
has bench-learn-tw-bad "$tmp/err" "none, occurrences or time"
exit $fail
