#!/usr/bin/env bash
# The main job on this host: build, then compile, check and time the default workload.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p out
./build/portent workloads
./build/portent run "${1:-mm512}" --threads "$(nproc)"
