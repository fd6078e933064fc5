#!/usr/bin/env python3
"""scripts/tune_retime.sh's TSV -> per workload: oneDNN (with reorders, native, OpenBLAS) median over rounds, and per
run (DIR:MODEL) the median ms and speed = oneDNN / ours; geomean per run over the target workloads.
usage: scripts/tune_retime_table.py OUT.tsv [WORKLOADS]"""
import sys, statistics, math, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
target = sys.argv[2].split(",") if len(sys.argv) > 2 else ["mm512", "conv_r50_2", "conv_r50_3", "conv_r50_4"]
lib = collections.defaultdict(list); ours = collections.defaultdict(list); loads = []
for r in rows:
    rnd, w, who, ms = r[0], r[1], r[2], r[3]
    loads.append(float(r[-1]))
    if not ms: continue
    if who == "onednn": lib[w].append((float(r[3]), float(r[4]), float(r[5])))
    else: ours[(w, who)].append(float(ms))
med = lambda xs: statistics.median(xs)
runs = sorted({who for (w, who) in ours})
print("load %.1f-%.1f" % (min(loads), max(loads)))
print("| workload | oneDNN ms (native) [OpenBLAS] | " + " | ".join(runs) + " |")
print("|---" * (len(runs) + 2) + "|")
speed = collections.defaultdict(dict)
for w in sorted(lib):
    d = med([x[0] for x in lib[w]]); dn = med([x[1] for x in lib[w]]); b = med([x[2] for x in lib[w]])
    cells = []
    for who in runs:
        if (w, who) in ours:
            m = med(ours[(w, who)]); speed[who][w] = (d / m, dn / m, b / m)
            cells.append("%.3f (%.2f)" % (m, d / m))
        else: cells.append("")
    print("| %s | %.3f (%.3f) [%.3f] | %s |" % (w, d, dn, b, " | ".join(cells)))
print()
for who in runs:
    ws = [w for w in target if w in speed[who]]
    if not ws: continue
    g = [math.exp(sum(math.log(speed[who][w][k]) for w in ws) / len(ws)) for k in range(3)]
    print("%-16s geomean over %d (%s): x oneDNN %.3f, native %.3f, OpenBLAS %.3f" % (who, len(ws), ",".join(ws), *g))
