#!/usr/bin/env bash
# The main job on this host: build, characterize this machine, then compile, check, time and
# profile the default workload (prediction and tuning join here as they land).
set -euo pipefail
cd "$(dirname "$0")/.."
workload="${1:-mm512}"
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p out
./build/portent characterize --quick -o out/host.json
./build/portent targets show out/host.json > out/host.txt
sed -n 1,40p out/host.txt
./build/portent run "$workload" --threads "$(nproc)"
./build/portent analyze "$workload" --sample 0.01 -o "out/$workload.profile.json"
echo "target description: out/host.json; profile: out/$workload.profile.json"
