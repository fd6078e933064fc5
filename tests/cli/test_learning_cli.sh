#!/bin/sh
# portent dataset / train / eval as a user runs them: collect a few measured schedules of two
# workloads, split by workload, train a tiny TLP, evaluate it; merge drops duplicates; empty
# data, a truncated model and bad usage exit 2 with a message.
portent="$1"
. "$(dirname "$0")/lib.sh"
lines() { wc -l <"$1" | tr -d ' '; }

check collect 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' --per-workload 6 \
  --min-time 0 --log "$tmp/d.jsonl" --seed 3
[ "$(lines "$tmp/d.jsonl")" -eq 12 ] || { echo "FAIL collect: $(lines "$tmp/d.jsonl") records, expected 12"; fail=1; }
# Resumable with --workloads specs too (records carry the workload key, not the spec): one more
# draw per workload, the six before skipped, then nothing left to do.
cp "$tmp/d.jsonl" "$tmp/resume.jsonl"
check resume 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' --per-workload 7 \
  --min-time 0 --log "$tmp/resume.jsonl" --seed 3
has resume "$tmp/out" "collected 2 records"
distinct=$(sed 's/"r": .*//' "$tmp/resume.jsonl" | sort -u | wc -l | tr -d ' ')
[ "$(lines "$tmp/resume.jsonl")" -eq 14 ] && [ "$distinct" -eq 14 ] ||
  { echo "FAIL resume: $(lines "$tmp/resume.jsonl") records, $distinct distinct, expected 14"; fail=1; }
check resume-done 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' --per-workload 7 \
  --min-time 0 --log "$tmp/resume.jsonl" --seed 3
has resume-done "$tmp/out" "2 workloads already had 7 records"
check shard 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' --per-workload 6 \
  --min-time 0 --log "$tmp/s1.jsonl" --seed 3 --shard 1/2
[ "$(lines "$tmp/s1.jsonl")" -eq 6 ] || { echo "FAIL shard: $(lines "$tmp/s1.jsonl") records, expected 6"; fail=1; }
# The other shard, merged with the first: the programs one run drew (a Slurm array's parts join).
check shard0 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' --per-workload 6 \
  --min-time 0 --log "$tmp/s0.jsonl" --seed 3 --shard 0/2
check shard-merge 0 "$portent" dataset merge -o "$tmp/s01.jsonl" "$tmp/s0.jsonl" "$tmp/s1.jsonl"
programs() { sed 's/"r": .*//' "$1" | sort -u; }
programs "$tmp/s01.jsonl" >"$tmp/p01"; programs "$tmp/d.jsonl" >"$tmp/pd"
cmp -s "$tmp/p01" "$tmp/pd" || { echo "FAIL shard-merge: the shards' programs are not the full run's"; fail=1; }
# --target T.json: a target file is checked to describe this machine; the records then carry this
# host's target string (as without --target), and a file of another CPU is refused.
host_target=$(grep -o '"llvm -keys=cpu[^"]*"' "$tmp/d.jsonl" | head -1)
other=targets/arm-neoverse-n1.json; [ "$(uname -m)" = aarch64 ] && other=targets/intel-skylake-sp.json
check target-other 2 "$portent" dataset collect --workloads 'matmul:16,16,16' --per-workload 1 --min-time 0 \
  --log "$tmp/tf.jsonl" --target $other
has target-other "$tmp/err" "arm-neoverse-n1.json describes\\|intel-skylake-sp.json describes"
[ ! -s "$tmp/tf.jsonl" ] || { echo "FAIL target-other: records written for another CPU's file"; fail=1; }
for f in targets/*.json; do
  "$portent" dataset collect --workloads 'matmul:16,16,16' --per-workload 1 --min-time 0 --log "$tmp/tf.jsonl" \
    --target "$f" >/dev/null 2>"$tmp/err" && continue
  grep -q "describes" "$tmp/err" || { echo "FAIL target-file $f:"; cat "$tmp/err"; fail=1; }
done
if [ -s "$tmp/tf.jsonl" ]; then
  grep -v -F -- "$host_target" "$tmp/tf.jsonl" | grep -q . && { echo "FAIL target-file: records not under $host_target"; fail=1; }
fi
check cpu-clock 0 "$portent" dataset collect --workloads 'matmul:32,24,40' --per-workload 2 \
  --min-time 0 --log "$tmp/c.jsonl" --seed 3 --threads 1 --cpu-clock
[ "$(lines "$tmp/c.jsonl")" -eq 2 ] || { echo "FAIL cpu-clock: $(lines "$tmp/c.jsonl") records, expected 2"; fail=1; }
check cpu-clock-remeasure 0 "$portent" dataset remeasure --from "$tmp/c.jsonl" --log "$tmp/c2.jsonl" --threads 1 --cpu-clock \
  --min-time 0 --target "llvm -keys=cpu -mcpu=other"
[ "$(lines "$tmp/c2.jsonl")" -eq 2 ] || { echo "FAIL cpu-clock-remeasure: $(lines "$tmp/c2.jsonl") records, expected 2"; fail=1; }
check merge 0 "$portent" dataset merge -o "$tmp/m.jsonl" "$tmp/d.jsonl" "$tmp/d.jsonl"
has merge "$tmp/out" "duplicates dropped"
distinct=$(sed 's/"r": .*//' "$tmp/d.jsonl" | sort -u | wc -l | tr -d ' ')
[ "$(lines "$tmp/m.jsonl")" -eq "$distinct" ] || { echo "FAIL merge: $(lines "$tmp/m.jsonl") lines, $distinct distinct"; fail=1; }
check split 0 "$portent" dataset split --data "$tmp/d.jsonl" --test-fraction 0.5 -o "$tmp/split.json"
has split "$tmp/split.json" '"test"'
check train 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 2 --batch 8 --width 16 -o "$tmp/t.safetensors"
has train "$tmp/out" "top-1"
has train "$tmp/err" "OpenBLAS core"
check eval 0 "$portent" eval --model "$tmp/t.safetensors" --data "$tmp/d.jsonl" --json
has eval "$tmp/out" '"top1"'
check eval-split 0 "$portent" eval --model "$tmp/t.safetensors" --data "$tmp/d.jsonl" --split "$tmp/split.json"
has eval-split "$tmp/out" "random ranking"
echo '{"[\"matmul\", 32, 24, 40, \"float32\"]": 2}' >"$tmp/w.json"
check eval-weights 0 "$portent" eval --model "$tmp/t.safetensors" --data "$tmp/d.jsonl" --weights "$tmp/w.json"
has eval-weights "$tmp/out" "tasks    1 "
# A forced OpenBLAS core is dropped: the command restarts itself and gets the detected one.
native=$(env -u OPENBLAS_CORETYPE "$portent" eval --model "$tmp/t.safetensors" --data "$tmp/d.jsonl" 2>&1 >/dev/null |
  sed -n 's/^OpenBLAS core: //p')
force=Haswell; [ "$native" = Haswell ] && force=Sandybridge
forced=$(OPENBLAS_CORETYPE=$force "$portent" eval --model "$tmp/t.safetensors" --data "$tmp/d.jsonl" 2>&1 >/dev/null |
  sed -n 's/^OpenBLAS core: //p')
[ -n "$native" ] && [ "$forced" = "$native" ] || { echo "FAIL core: native '$native', with $force forced '$forced'"; fail=1; }

# tlp:WEIGHTS in tune: an MTL-TLP model ranks with this host's head (trained second here, so not
# the first), or the head named after @; a forced OpenBLAS core is dropped there too.
host_mcpu=$(grep -o -- '-mcpu=[a-z0-9_-]*' "$tmp/d.jsonl" | head -1 | sed 's/-mcpu=//')
sed "s/-mcpu=$host_mcpu/-mcpu=otherplat/" "$tmp/d.jsonl" >"$tmp/d2.jsonl"
check mtl-two 0 "$portent" train mtl-tlp --data "$tmp/d2.jsonl" --data "$tmp/d.jsonl" --target-platform "$host_mcpu" \
  --epochs 1 --batch 8 --width 16 -o "$tmp/m.safetensors"
tune_tlp() { OPENBLAS_CORETYPE=$force "$portent" tune matmul:32,24,40 --model "${kind:-tlp}:$1" --trials 8 \
  --measure-per-round 4 --population 16 --generations 1 --min-time 0 --quiet; }
check tune-tlp 0 tune_tlp "$tmp/m.safetensors"
has tune-tlp "$tmp/err" "ranks with the head of $host_mcpu, fine-tuned online; OpenBLAS core: $native"
has tune-tlp "$tmp/err" "tlp online: 1 fine-tunings (10 epochs, batch 128, whole network) on up to "
kind=tlp-offline check tune-tlp-offline 0 tune_tlp "$tmp/m.safetensors"
has tune-tlp-offline "$tmp/err" "ranks with the head of $host_mcpu, offline; OpenBLAS core: $native"
kind=tlp-head check tune-tlp-last 0 tune_tlp "$tmp/m.safetensors"
has tune-tlp-last "$tmp/err" "(10 epochs, batch 128, head and residual blocks)"
has tune-tlp-last "$tmp/err" "fine-tuning its last layers online"
check tune-tlp-head 0 tune_tlp "$tmp/m.safetensors@otherplat"
has tune-tlp-head "$tmp/err" "ranks with the head of otherplat"
check tune-tlp-nohead 2 tune_tlp "$tmp/m.safetensors@nosuch"
has tune-tlp-nohead "$tmp/err" "no output head for platform 'nosuch'"
# bench tune with a model by its absolute path: the results files stay in the results directory.
check bench-tune-tlp 0 "$portent" bench tune --workloads mm512 --models "tlp:$tmp/t.safetensors" --checkpoints 4 \
  --population 16 --generations 1 --measure-per-round 4 --min-time 0 --threads 1 --max-measurements 4 --results "$tmp/bt"
ls "$tmp"/bt/mm512_tlp:*t.safetensors.stats.json >/dev/null 2>&1 || { echo "FAIL bench-tune-tlp: no stats file in $tmp/bt"; fail=1; }
# Logs written by TVM itself (tests/data/tvm_logs: v0.3 and v0.5 records, DAG-hash workload keys
# portent cannot build): TLP reads them (it needs only the steps) and says what it read and skipped.
{ cat tests/data/tvm_logs/matmul.json; echo '{"i": [broken'; } >"$tmp/tvm.json"
check tvm-logs 0 "$portent" eval --model "$tmp/t.safetensors" --data tests/data/tvm_logs/resnet-50-NHWC-B1-llvm.json \
  --data "$tmp/tvm.json"
has tvm-logs "$tmp/err" "eval: 27 schedules (0 held out) in 27 workloads, 1 platform; skipped 1 unreadable lines"

: >"$tmp/empty.jsonl"
check empty 2 "$portent" train tlp --data "$tmp/empty.jsonl" -o "$tmp/x.safetensors"
has empty "$tmp/err" "no training sample"
head -c 100 "$tmp/t.safetensors" >"$tmp/trunc.safetensors"
check truncated 2 "$portent" eval --model "$tmp/trunc.safetensors" --data "$tmp/d.jsonl"
has truncated "$tmp/err" "trunc.safetensors"
check bad-shard 2 "$portent" dataset collect --workloads 'matmul:32,24,40' --per-workload 1 --log "$tmp/x.jsonl" --shard 2/2
has bad-shard "$tmp/err" "dataset collect: --shard wants i/N"
check bad-shard-remeasure 2 "$portent" dataset remeasure --from "$tmp/d.jsonl" --log "$tmp/x.jsonl" --shard 1/0
has bad-shard-remeasure "$tmp/err" "dataset remeasure: --shard wants i/N"
check bad-loss 2 "$portent" train tlp --data "$tmp/d.jsonl" --loss hinge -o "$tmp/x.safetensors"
check train-avg 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 3 --batch 8 --width 16 --avg-epochs 2 \
  --label-power 2 -o "$tmp/avg.safetensors"
check train-avg-bad 2 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 3 --avg-epochs 4 -o "$tmp/x.safetensors"
has train-avg-bad "$tmp/err" "avg-epochs 0 to --epochs"
check train-power-bad 2 "$portent" train tlp --data "$tmp/d.jsonl" --label-power -1 -o "$tmp/x.safetensors"
# tlp trains on whole tasks by default (session 17): the same model as --task-batches, another with
# --mixed-batches (TLP's reference).
check train-tb 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 2 --batch 8 --width 16 --task-batches \
  -o "$tmp/tb.safetensors"
check train-mixed 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 2 --batch 8 --width 16 --mixed-batches \
  -o "$tmp/mixed.safetensors"
cmp -s "$tmp/t.safetensors" "$tmp/tb.safetensors" || { echo "FAIL train-tb: the default is not --task-batches"; fail=1; }
cmp -s "$tmp/t.safetensors" "$tmp/mixed.safetensors" && { echo "FAIL train-mixed: --mixed-batches is the default"; fail=1; }
# --emb 22 (TLP's features, without the loop extents replayed on each workload that are the default
# since session 21) trains another model, which eval reads with its own feature width; --emb 26 is the
# default model byte for byte.
check train-emb22 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 2 --batch 8 --width 16 --emb 22 \
  -o "$tmp/e22.safetensors"
cmp -s "$tmp/t.safetensors" "$tmp/e22.safetensors" && { echo "FAIL train-emb22: --emb 22 is the default model"; fail=1; }
check train-emb 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 2 --batch 8 --width 16 --emb 26 \
  -o "$tmp/e26.safetensors"
cmp -s "$tmp/t.safetensors" "$tmp/e26.safetensors" || { echo "FAIL train-emb: --emb 26 is not the default model"; fail=1; }
check eval-emb 0 "$portent" eval --model "$tmp/e22.safetensors" --data "$tmp/d.jsonl" --split "$tmp/split.json"
has eval-emb "$tmp/out" "random ranking"
check train-emb-bad 2 "$portent" train tlp --data "$tmp/d.jsonl" --emb 27 -o "$tmp/x.safetensors"
has train-emb-bad "$tmp/err" "emb wants 15 to 26"
check train-rank 0 "$portent" train tlp --data "$tmp/d.jsonl" --epochs 3 --batch 8 --width 16 --ndcg-k 2 \
  --gain-scale 4 -o "$tmp/rank.safetensors"
check train-rank-bad 2 "$portent" train tlp --data "$tmp/d.jsonl" --ndcg-k -1 -o "$tmp/x.safetensors"
has train-rank-bad "$tmp/err" "train: --ndcg-k wants a whole number >= 0 (0: the whole list), not '-1'"
check train-gain-bad 2 "$portent" train tlp --data "$tmp/d.jsonl" --gain-scale abc -o "$tmp/x.safetensors"
has train-gain-bad "$tmp/err" "train: --gain-scale wants a number in (0, 64] (1: TLP's gain), not 'abc'"
# Analytic labels of extra programs (no measuring), resumable like collect, then pre-training on
# them; the held-out workload's are not used.
check collect-analytic 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' --per-workload 5 \
  --log "$tmp/a.jsonl" --seed 9 --analytic targets/zen4-epyc-2c.json
has collect-analytic "$tmp/out" "labelled 10 records with the analytic predictor on targets/zen4-epyc-2c.json"
[ "$(grep -c -- '-mcpu=zen4-epyc-2c-analytic"' "$tmp/a.jsonl")" -eq 10 ] ||
  { echo "FAIL collect-analytic: not 10 records of platform zen4-epyc-2c-analytic"; cat "$tmp/a.jsonl"; fail=1; }
check collect-analytic-resume 0 "$portent" dataset collect --workloads 'matmul:32,24,40;matmul:16,64,32' \
  --per-workload 5 --log "$tmp/a.jsonl" --seed 9 --analytic targets/zen4-epyc-2c.json
has collect-analytic-resume "$tmp/out" "2 workloads already had 5 records"
check collect-analytic-target 2 "$portent" dataset collect --workloads 'matmul:32,24,40' --per-workload 1 \
  --log "$tmp/x.jsonl" --analytic targets/zen4-epyc-2c.json --target targets/zen4-epyc-2c.json
has collect-analytic-target "$tmp/err" "drop --target"
check collect-analytic-missing 2 "$portent" dataset collect --workloads 'matmul:32,24,40' --per-workload 1 \
  --log "$tmp/x.jsonl" --analytic "$tmp/nosuch.json"
has collect-analytic-missing "$tmp/err" "nosuch.json"
check train-pretrain 0 "$portent" train tlp --data "$tmp/d.jsonl" --split "$tmp/split.json" --pretrain "$tmp/a.jsonl" \
  --pretrain-epochs 2 --epochs 2 --batch 8 --width 16 -o "$tmp/pre.safetensors"
has train-pretrain "$tmp/err" "train: 10 pre-training schedules from .*a.jsonl (5 of them on held-out workloads, not used)"
has train-pretrain "$tmp/err" "pre-training epoch   2"
has train-pretrain "$tmp/err" "train: 12 schedules (6 held out) in 2 workloads"
check train-pretrain-bad 2 "$portent" train tlp --data "$tmp/d.jsonl" --pretrain "$tmp/a.jsonl" --pretrain-epochs x \
  -o "$tmp/x.safetensors"
has train-pretrain-bad "$tmp/err" "train: --pretrain-epochs wants a whole number from 0 to 100000, not 'x'"
check train-pretrain-alone 2 "$portent" train tlp --data "$tmp/d.jsonl" --pretrain-epochs 2 -o "$tmp/x.safetensors"
has train-pretrain-alone "$tmp/err" "pretrain-epochs needs --pretrain"
check train-pretrain-mtl 2 "$portent" train mtl-tlp --data "$tmp/d.jsonl" --target-platform x --pretrain "$tmp/a.jsonl" \
  -o "$tmp/x.safetensors"
has train-pretrain-mtl "$tmp/err" "not mtl-tlp's"
check no-target 2 "$portent" train mtl-tlp --data "$tmp/d.jsonl" -o "$tmp/x.safetensors"
check absent-target 2 "$portent" train mtl-tlp --data "$tmp/d.jsonl" --target-platform nosuch -o "$tmp/x.safetensors"
has absent-target "$tmp/err" "not in the data"
exit $fail
