#!/bin/sh
# portent predict --json on a small profile, as docs/formats.md ("Prediction") describes it: it
# parses; seconds, functions with hit_fraction and bytes_from per level (L1 .. DRAM), blocks with
# their bound (and unit only for unit), and options with every switch of the model, the true ones
# exactly those the text report's model line names (for the default model, the patent's and all
# switches on). Neither report shows a negative compute or memory time (matmul:32,24,40 printed
# "memory -6.159e-20 ms" on zen4-epyc-2c: rounding where misses add nothing).
portent="$1"
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
check analyze 0 "$portent" analyze matmul:32,24,40 -o "$tmp/p.json"
every="full+overlap+strides+carried+inflight+lanes+sets+shared+far+busy+forward+dirty+llcwalk+regs+streams"
every="$every+cmpbr+fold+setsum+setns+setloads+memchain-assoc"
for model in default patent "$every"; do
  set -- --target zen4-epyc-2c "$tmp/p.json"
  [ "$model" = default ] || set -- "$@" --model "$model"
  check "json $model" 0 "$portent" predict "$@" --json
  cp "$tmp/out" "$tmp/$model.json"
  check "text $model" 0 "$portent" predict "$@"
  cp "$tmp/out" "$tmp/$model.txt"
  if grep -qE -- '(compute|memory) -|(cycles|seconds)":[[:space:]]*-' "$tmp/$model.txt" "$tmp/$model.json"; then
    echo "FAIL negative $model: a negative time"; grep -hE -- '(compute|memory) -|":[[:space:]]*-' "$tmp/$model.txt" "$tmp/$model.json"; fail=1
  fi
  python3 - "$tmp/$model.json" "$tmp/$model.txt" "$model" <<'PY' || fail=1
import json, math, sys
doc_path, text_path, model = sys.argv[1:4]
SWITCHES = ["steady_state", "mlp", "bandwidth", "overlap", "strides", "carried", "level_inflight", "lanes",
            "l1_sets", "shared", "far_sets", "busy", "forward", "dirty_sets", "llc_walks", "spills", "set_streams",
            "fuse_branch", "fold_loads", "sets_sum", "set_ns", "set_loads", "mem_chains", "fully_assoc"]
BOUNDS = {"issue", "unit", "latency", "memory", "bandwidth", "fork-join"}
LEVELS = ["L1", "L2", "L3", "DRAM"]  # zen4-epyc-2c: three cache levels
errors = []
def need(cond, what):
    if not cond: errors.append(what)
with open(doc_path) as f:
    r = json.load(f)  # parses
for key in ["kind", "version", "target", "threads", "model", "options", "seconds", "cycles", "compute_seconds",
            "memory_seconds", "bandwidth_extra_seconds", "fork_join_seconds", "bound", "functions", "fallbacks"]:
    need(key in r, "no key " + key)
need(r.get("kind") == "portent-prediction" and r.get("version") == 1 and r.get("target") == "zen4-epyc-2c",
     "kind/version/target")
need(r.get("seconds", 0) > 0, "seconds %r" % r.get("seconds"))
need(r.get("bound") in BOUNDS, "bound %r" % r.get("bound"))
need(r.get("compute_seconds", -1) >= 0 and r.get("memory_seconds", -1) >= 0, "negative compute or memory")
# options: every switch, no other key; true exactly where the model line names its word
opts = r.get("options", {})
need(list(opts) == SWITCHES, "options keys %s" % list(opts))
need(all(isinstance(v, bool) for v in opts.values()), "options not all booleans")
line = [l for l in open(text_path) if "; model: " in l]
need(len(line) == 1, "no model line in the text report")
words = line[0].split("; model: ", 1)[1].split() if line else []
need(r.get("model", "").split() == words, "model %r, text line %r" % (r.get("model"), words))
on = sum(1 for v in opts.values() if v)
need(on == len([w for w in words if w != "patent"]), "%d options on, model line %r" % (on, words))
need(opts.get("steady_state") == ("steady-state" in words), "steady_state vs the model line")
if model == "patent":
    need(words == ["patent"] and on == 0, "patent: %r" % words)
elif model != "default":
    need(on == len(SWITCHES), "every switch on: %d of %d" % (on, len(SWITCHES)))
# functions and blocks
fs = r.get("functions", [])
need(len(fs) == 2, "%d functions" % len(fs))
need(math.isclose(sum(f["seconds"] for f in fs), r["seconds"], rel_tol=1e-9), "seconds != sum over functions")
blocks = 0
for f in fs:
    name = f.get("name")
    for key in ["name", "parallel", "seconds", "cycles", "compute_cycles", "memory_cycles", "bandwidth_seconds",
                "fork_join_seconds", "work_fraction", "core_share", "load_latency_cycles", "bound", "hit_fraction",
                "bytes_from", "blocks"]:
        need(key in f, "%s: no key %s" % (name, key))
    need(f.get("bound") in BOUNDS, "%s: bound %r" % (name, f.get("bound")))
    need(list(f.get("hit_fraction", {})) == LEVELS and list(f.get("bytes_from", {})) == LEVELS,
         "%s: levels %s / %s" % (name, list(f.get("hit_fraction", {})), list(f.get("bytes_from", {}))))
    need(math.isclose(sum(f["hit_fraction"].values()), 1, rel_tol=1e-9), "%s: hit fractions sum" % name)
    b = f.get("bytes_from", {})
    need(all(v >= 0 for v in b.values()) and b.get("L2", 0) >= b.get("L3", 0) >= b.get("DRAM", 0),
         "%s: bytes_from %s" % (name, b))
    need(f.get("memory_cycles", -1) >= 0, "%s: memory cycles %r" % (name, f.get("memory_cycles")))
    if f.get("bandwidth_seconds", 0) > 0:
        need(f.get("bandwidth_level") in LEVELS, "%s: bandwidth_level %r" % (name, f.get("bandwidth_level")))
    need(opts.get("bandwidth") or f.get("bandwidth_seconds") == 0, "%s: a bandwidth bound with +bandwidth off" % name)
    for x in f.get("blocks", []):
        blocks += 1
        for key in ["name", "ecount", "cycles", "compute_cycles", "total_cycles", "uops", "bound"]:
            need(key in x, "%s/%s: no key %s" % (name, x.get("name"), key))
        need(x.get("bound") in BOUNDS - {"bandwidth", "fork-join"}, "%s/%s: bound %r" % (name, x.get("name"), x.get("bound")))
        need(("unit" in x) == (x.get("bound") == "unit"), "%s/%s: unit %r with bound %r" % (name, x.get("name"), x.get("unit"), x.get("bound")))
        need(x.get("compute_cycles", 0) <= x.get("cycles", 0), "%s/%s: compute over cycles" % (name, x.get("name")))
par = [f for f in fs if f.get("name") == "portent_matmul_par0"]
need(par and par[0]["parallel"] and par[0]["bytes_from"]["L1"] > 0, "portent_matmul_par0: parallel, L1 bytes")
need(blocks >= 5, "%d blocks" % blocks)
for e in errors:
    print("FAIL json %s: %s" % (model, e))
sys.exit(1 if errors else 0)
PY
done
exit $fail
