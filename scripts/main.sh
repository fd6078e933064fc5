#!/usr/bin/env bash
# The main job on this host: build; characterize this machine; tune the default workload with
# a few measurements; profile the best schedule once; predict it here and on a machine we
# don't have: the other EPYC generation's measured description (Zen 4 <-> Zen 5), and a
# published one.
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
# The other generation of these VMs, characterized there by portent (targets/zen4-epyc-2c.json,
# targets/zen5-epyc-2c.json): the profile made here predicts it without running on it.
if grep -q '"microarchitecture":[[:space:]]*"zen4"' out/host.json; then other=zen5; else other=zen4; fi
echo "== predicted on a machine we don't have (the $other EPYC VM, measured there)"
$p predict --target "targets/$other-epyc-2c.json" "out/$workload.profile.json" --blocks 3
if ! grep -q '"microarchitecture":[[:space:]]*"zen3"' out/host.json; then
  echo "== predicted on a machine we don't have (the Zen 3 EPYC VM, AVX2 only, measured there)"
  $p predict --target targets/zen3-epyc-2c.json "out/$workload.profile.json" --blocks 3
fi
echo "== predicted on a machine we don't have (the H100 machine's 16-core Emerald Rapids host, measured there), 16 threads"
$p predict --target targets/h100.json "out/$workload.profile.json" --threads 16 --blocks 3
echo "== predicted on a machine we don't have (published Intel Skylake-SP figures)"
$p predict --target targets/intel-skylake-sp.json "out/$workload.profile.json" --blocks 3
echo "outputs: out/host.json, out/$workload.jsonl (records), out/$workload.best.ll, out/$workload.profile.json"
