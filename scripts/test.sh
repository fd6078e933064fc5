#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds (release and ASan/UBSan), runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600)
if [ "${PORTENT_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPORTENT_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  # LLVM's own allocations outlive our handles in places; leaks are checked by our own tests.
  (cd build-asan && PORTENT_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$jobs" --timeout 900 -L sanitize)
fi
