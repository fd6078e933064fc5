#!/usr/bin/env python3
"""How soon each search log reaches a latency: tune_reach.py TARGET_SECONDS LOG.jsonl...

For each records log of `portent tune` / `bench tune --results DIR` (DIR/WORKLOAD_MODEL.jsonl),
prints the running best in ms after 16 / 64 / 128 / 256 / 512 / 1000 measurements and the first
measurement (1-based) whose running best is within 5%, 2%, 1% of TARGET and at it, with the
search's wall seconds to it in brackets (from the log's .stats.json, when there). A failed
measurement counts as a measurement with no latency. TLP's search-efficiency figure: TARGET =
xgb's best after 1000 measurements (docs/learning.md, "In the tuner").
"""
import json
import os
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    target = float(argv[1])
    for log in argv[2:]:
        best, running = float("inf"), []
        with open(log) as f:
            for line in f:
                r = json.loads(line)["r"]
                best = min(best, min(r[0]) if r[1] == 0 else float("inf"))
                running.append(best)
        stats = log[:-len(".jsonl")] + ".stats.json" if log.endswith(".jsonl") else ""
        wall = json.load(open(stats)).get("wall", []) if stats and os.path.exists(stats) else []
        at = " / ".join("%.3f" % (running[c - 1] * 1e3) if len(running) >= c else "-" for c in (16, 64, 128, 256, 512, 1000))
        reach = []
        for tol in (1.05, 1.02, 1.01, 1.0):
            i = next((k for k, b in enumerate(running) if b <= target * tol * (1 + 1e-9)), None)
            reach.append("not in %d" % len(running) if i is None else
                         "%d [%s s]" % (i + 1, "%.0f" % wall[i] if i < len(wall) else "?"))
        print("%s: %d measured; best ms @16/64/128/256/512/1000 %s; within 5%% / 2%% / 1%% / at %g ms: %s" %
              (os.path.basename(log), len(running), at, target * 1e3, " / ".join(reach)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
