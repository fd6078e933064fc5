#!/bin/bash
# issue 14 (docs/validation.md, "Tuning", session 6). Re-time, in one window and alternating, oneDNN/OpenBLAS and the best of each run's first 64
# records. Run in the directory holding the results dirs (or RESULTS=DIR); PORTENT=path of the binary. Both sides are timed by
# the thread's CPU time (bench tune's default, run --cpu-clock), so other processes' time slices count for neither; CLOCK=wall
# times both by the wall clock instead.
# usage: scripts/tune_retime.sh OUT.tsv ROUNDS WORKLOAD:DIR:MODEL ...   (DIR/WORKLOAD_MODEL.jsonl)
P=${PORTENT:-portent}
if [ "${CLOCK:-cpu}" = wall ]; then bench_clock=--wall-clock; run_clock=; else bench_clock=; run_clock=--cpu-clock; fi
out=$1; rounds=$2; shift 2
cd "${RESULTS:-.}"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
mkdir -p rt
for r in $(seq 1 $rounds); do
  for spec in "$@"; do
    IFS=: read w dir model <<< "$spec"
    head -64 $dir/${w}_${model}.jsonl > rt/${w}_${dir}_${model}.jsonl
  done
  ws=$(for spec in "$@"; do echo ${spec%%:*}; done | sort -u)
  for w in $ws; do
    mkdir -p rt/B$r
    l=$(cut -d' ' -f1 /proc/loadavg)
    nice -n 10 $P bench tune --results rt/B$r --baselines-only --workloads $w --models xgb --threads 1 $bench_clock > rt/B$r.$w.out 2>&1
    python3 - rt/B$r/$w.baselines.json $w $r $l >> $out <<'PY'
import json,sys
b=json.load(open(sys.argv[1]))
ms=lambda k: "%.4f" % (b[k][-1]*1e3)
print("\t".join([sys.argv[3],sys.argv[2],"onednn",ms("onednn_s"),ms("onednn_native_s"),ms("openblas_s"),sys.argv[4]]))
PY
    for spec in "$@"; do
      IFS=: read w2 dir model <<< "$spec"
      [ "$w2" = "$w" ] || continue
      l=$(cut -d' ' -f1 /proc/loadavg)
      ms=$(nice -n 10 $P run $w --schedule rt/${w}_${dir}_${model}.jsonl --threads 1 --min-time 0.5 $run_clock 2>&1 | sed -n 's/.*: \([0-9.]*\) ms median.*/\1/p')
      printf "%s\t%s\t%s:%s\t%s\t\t\t%s\n" $r $w $dir $model "$ms" $l >> $out
    done
  done
done
