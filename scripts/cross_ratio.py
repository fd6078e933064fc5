#!/usr/bin/env python3
"""How well the predictor sees one generation's time against another's, candidate by candidate.

Reads two `portent bench predict --tsv` files of the same schedules, A (e.g. `--from zen5`) and
B (e.g. `--cross zen5 zen4`: the same profiles, B's target and B's measured times), and compares
the measured ratio B/A of each candidate with the predicted one (a model column, default
portent's default model). With --profiles SET/profiles.jsonl.gz it also groups the candidates
by the share of their executed operations that are float vectors of 512 bits or more (what
Zen 4 runs at half Zen 5's throughput) and prints the ratios per group.

usage: scripts/cross_ratio.py A.tsv B.tsv [--model NAME] [--profiles FILE]
"""
import argparse
import gzip
import json
import math
import statistics


def read_tsv(path):
    rows = {}
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            rows[(v[0], int(v[1]))] = dict(zip(head, v))
    return rows


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for m in range(i, j + 1):
            r[order[m]] = (i + j) / 2 + 1
        i = j + 1
    return r


def pearson(a, b):
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    return sab / math.sqrt(saa * sbb) if saa > 0 and sbb > 0 else float("nan")


def spearman(a, b):
    return pearson(ranks(a), ranks(b))


def wide_share(profile):
    """Executed float vector operations of >= 512 bits over all executed non-plumbing ones."""
    plumbing = {"phi", "getelementptr", "bitcast", "br", "ret", "zext", "trunc", "freeze"}
    wide = total = 0.0
    for f in profile["functions"]:
        for b in f["blocks"]:
            c = float(b.get("count", 0) or 0)
            for n in b.get("nodes", []):
                if n.get("opcode") in plumbing:
                    continue
                total += c
                t = n.get("type", "")
                if n.get("lanes", 1) > 1 and n.get("bits", 0) >= 512 and t[:1] in ("f", "b") \
                        and n.get("op") in ("add", "sub", "mul", "fma", "div", "minmax"):
                    wide += c
    return wide / total if total > 0 else 0.0


def summary(name, keys, meas, pred):
    m = [meas[k] for k in keys]
    p = [pred[k] for k in keys]
    err = [abs(pp / mm - 1) for pp, mm in zip(p, m)]
    q = sorted(pp / mm for pp, mm in zip(p, m))
    print(f"{name:<14} {len(keys):4d} {statistics.median(m):9.3f} {statistics.median(p):9.3f} "
          f"{100 * statistics.fmean(err):8.1f}% {statistics.median(q):8.3f} "
          f"{spearman(p, m) if len(keys) > 2 else float('nan'):9.3f} "
          f"{pearson([math.log(x) for x in p], [math.log(x) for x in m]) if len(keys) > 2 else float('nan'):8.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--model", default="steady+bw+overlap+strides")
    ap.add_argument("--profiles")
    o = ap.parse_args()
    A, B = read_tsv(o.a), read_tsv(o.b)
    keys = [k for k in A if k in B and float(A[k]["measured_s"]) > 0 and float(B[k]["measured_s"]) > 0
            and float(A[k][o.model]) > 0 and float(B[k][o.model]) > 0]
    meas = {k: float(B[k]["measured_s"]) / float(A[k]["measured_s"]) for k in keys}
    pred = {k: float(B[k][o.model]) / float(A[k][o.model]) for k in keys}
    print(f"ratio B/A per candidate ({o.b} over {o.a}), model {o.model}: {len(keys)} candidates in both")
    print(f"{'group':<14} {'n':>4} {'meas med':>9} {'pred med':>9} {'MAPE':>9} {'pred/meas':>8} "
          f"{'Spearman':>9} {'r(log)':>8}")
    summary("all", keys, meas, pred)
    for w in sorted({k[0] for k in keys}):
        summary(w, [k for k in keys if k[0] == w], meas, pred)
    if o.profiles:
        share = {}
        with gzip.open(o.profiles, "rt") as f:
            for line in f:
                d = json.loads(line)
                share[(d["workload"], int(d["candidate"]))] = wide_share(d["profile"])
        have = [k for k in keys if k in share]
        print("\nby the share of executed ops that are >= 512-bit float vector arithmetic:")
        for lo, hi, name in ((0, 0.005, "none (<0.5%)"), (0.005, 0.1, "0.5-10%"), (0.1, 1.01, ">= 10%")):
            g = [k for k in have if lo <= share[k] < hi]
            if len(g) > 1:
                summary(name, g, meas, pred)
        s = [share[k] for k in have]
        print(f"Spearman(share, measured ratio) {spearman(s, [meas[k] for k in have]):.3f}, "
              f"(share, predicted ratio) {spearman(s, [pred[k] for k in have]):.3f}")


if __name__ == "__main__":
    main()
