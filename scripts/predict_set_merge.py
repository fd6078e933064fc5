#!/usr/bin/env python3
"""Adds the candidates of one saved `bench predict` set (records + profiles) to another.

    scripts/predict_set_merge.py INTO FROM [--only-from N]

INTO and FROM are set directories (docs/formats.md, "Saved prediction sets"). A candidate of
FROM that INTO already holds (same workload and candidate number) is left out, as is one with
candidate number below N (--only-from 1000: only the tuned candidates of `--tuned`). Both
sets must have been measured with the same target file and thread count: INTO's target.json
is kept, so checked byte for byte. Files are rewritten through a temporary file, so a failure
leaves INTO as it was."""
import gzip, json, os, sys

def load(d):
    recs = [l for l in open(os.path.join(d, "records.jsonl")) if l.strip()]
    with gzip.open(os.path.join(d, "profiles.jsonl.gz"), "rt") as f:
        profs = [l for l in f if l.strip()]
    return recs, profs

def key_rec(line):
    p = json.loads(line)["portent"]
    return p["workload"], p["candidate"], p["threads"]

def main():
    args = sys.argv[1:]
    only_from = 0
    if "--only-from" in args:
        i = args.index("--only-from")
        only_from = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    into, frm = args
    if open(os.path.join(into, "target.json"), "rb").read() != open(os.path.join(frm, "target.json"), "rb").read():
        sys.exit(f"{frm}/target.json differs from {into}/target.json: not the same machine's set")
    a_recs, a_profs = load(into)
    b_recs, b_profs = load(frm)
    have = {key_rec(l)[:2] for l in a_recs}
    threads = {key_rec(l)[2] for l in a_recs + b_recs}
    if len(threads) != 1:
        sys.exit(f"the sets were measured at different thread counts: {sorted(threads)}")
    profs = {(json.loads(l)["workload"], json.loads(l)["candidate"]): l for l in b_profs}
    added = 0
    for l in b_recs:
        w, c, _ = key_rec(l)
        if (w, c) in have or c < only_from:
            continue
        if (w, c) not in profs:
            sys.exit(f"{frm}: candidate {w} #{c} has a record but no profile")
        a_recs.append(l if l.endswith("\n") else l + "\n")
        a_profs.append(profs[(w, c)] if profs[(w, c)].endswith("\n") else profs[(w, c)] + "\n")
        added += 1
    # records grouped by workload in INTO's order, then new workloads
    order = []
    for l in a_recs:
        w = key_rec(l)[0]
        if w not in order:
            order.append(w)
    a_recs.sort(key=lambda l: (order.index(key_rec(l)[0]), key_rec(l)[1]))
    a_profs.sort(key=lambda l: (order.index(json.loads(l)["workload"]), json.loads(l)["candidate"]))
    tmp = os.path.join(into, "records.jsonl.tmp")
    with open(tmp, "w") as f:
        f.writelines(a_recs)
    ptmp = os.path.join(into, "profiles.jsonl.gz.tmp")
    with gzip.open(ptmp, "wt") as f:
        f.writelines(a_profs)
    os.replace(ptmp, os.path.join(into, "profiles.jsonl.gz"))
    os.replace(tmp, os.path.join(into, "records.jsonl"))
    print(f"added {added} candidates of {frm} to {into}")

main()
