#!/usr/bin/env bash
# The main job on this host: build; characterize this machine; tune the default workload with
# a few measurements; profile the best schedule once; predict it here and on a machine we
# don't have (a shipped target description).
set -euo pipefail
cd "$(dirname "$0")/.."
workload="${1:-mm512}"
trials="${TRIALS:-64}"
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p out
p=./build/portent
$p characterize --quick -o out/host.json
$p targets show out/host.json > out/host.txt
sed -n 1,25p out/host.txt
rm -f "out/$workload.jsonl"
$p tune "$workload" --model xgb --trials "$trials" --measure-per-round 16 --population 512 \
   --log "out/$workload.jsonl" -o "out/$workload.best.ll" --quiet
$p run "$workload" --schedule "out/$workload.jsonl" --threads "$(nproc)"
$p analyze "$workload" --schedule "out/$workload.jsonl" --sample 0.01 -o "out/$workload.profile.json"
echo "== predicted on this machine"
$p predict --target out/host.json "out/$workload.profile.json" --blocks 3
echo "== predicted on a machine we don't have (published AMD Zen 4 figures)"
$p predict --target targets/amd-zen4.json "out/$workload.profile.json" --blocks 3
echo "outputs: out/host.json, out/$workload.jsonl (records), out/$workload.best.ll, out/$workload.profile.json"
