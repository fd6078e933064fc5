#!/usr/bin/env bash
# On the device machine (docs/validation.md, "H100 host"): unpacks the bundle that
# scripts/device-bundle.sh made, then, in the order named:
#   env            the machine's facts (lscpu, glibc, nvidia-smi)
#   characterize   portent characterize --gpu (falls back to --quick, then to the CPU alone)
#   replay:T       the saved Zen 4 set's schedules measured at T threads, predicted from the
#                  Zen 4 profiles with this machine's target file (bench predict --measure-only)
#   profile:T      the same schedules measured again and profiled here (set h100-prof-tT): a
#                  second measurement (the labels' own noise) and profiles to compare with Zen 4's
#   gputest        the GPU probes' ctest programs, when the bundle carries them
#                  (BUNDLE_TESTS="microbench_test_gpu microbench_test_gpu_ptx"): 0 passed, 77 skipped
#   analyze:T      profiles of the default schedules of a few workloads at T threads
#                  (analyze-W-tT.json), to compare byte for byte with the same command elsewhere
# Everything lands in $RES (default /tmp/res) and is packed into $OUT/results.tgz at the end;
# each step has its own time limit so that the pack is always made.
#   scripts/device-validate.sh env characterize replay:1 replay:8 replay:16
set -uo pipefail
cd "$(dirname "$0")/.."
res=${RES:-/tmp/res}
mkdir -p /tmp/pd "$res"
[ -x /tmp/pd/run ] || tar -xJf .dev/portent.tar.xz -C /tmp/pd || exit 1
p=(/tmp/pd/run portent)
target=$res/h100.json
[ -f "$target" ] || { [ -f targets/h100.json ] && cp targets/h100.json "$target"; }
limit() { # seconds a step may take: what is left of LIMIT (default 560) less a margin
  local left=$(( ${LIMIT:-560} - SECONDS - 15 ))
  [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}
for step in "$@"; do
  echo "== $step at ${SECONDS}s" >&2
  case $step in
    env)
      { uname -a; ldd --version | head -1; nproc; free -g; lscpu; nvidia-smi; "${p[@]}" --version; } >"$res/env.txt" 2>&1
      grep -E 'Model name|^CPU\(s\)|Thread|L1d|L2|L3|glibc|GLIBC|H100|portent' "$res/env.txt" >&2 ;;
    characterize)
      timeout "$(limit 330)" "${p[@]}" characterize --gpu --name h100-host -o "$target" 2>"$res/characterize.log" ||
        timeout "$(limit 150)" "${p[@]}" characterize --gpu --quick --name h100-host -o "$target" 2>>"$res/characterize.log" ||
        timeout "$(limit 150)" "${p[@]}" characterize --quick --name h100-host -o "$target" 2>>"$res/characterize.log"
      echo "characterize: exit $?" >&2
      tail -15 "$res/characterize.log" >&2 ;;
    replay:*)
      t=${step#replay:}
      timeout "$(limit 300)" "${p[@]}" bench predict --replay data/predict/zen4 --measure-only --threads "$t" \
        --target "$target" --save "$res/h100-t$t" --platform "h100-t$t" --svg "$res/h100-t$t.svg" \
        >"$res/replay-t$t.txt" 2>"$res/replay-t$t.log"
      echo "replay $t: exit $?" >&2
      grep -A3 -E '^model|^ablation' "$res/replay-t$t.txt" | head -12 >&2 ;;
    profile:*)
      t=${step#profile:}
      timeout "$(limit 540)" "${p[@]}" bench predict --replay data/predict/zen4 --threads "$t" \
        --target "$target" --save "$res/h100-prof-t$t" --platform "h100-prof-t$t" --svg "$res/h100-prof-t$t.svg" \
        >"$res/profile-t$t.txt" 2>"$res/profile-t$t.log"
      echo "profile $t: exit $?" >&2
      grep -A3 -E '^model|^ablation' "$res/profile-t$t.txt" | head -12 >&2 ;;
    gputest)
      for t in microbench_test_gpu microbench_test_gpu_ptx; do
        [ -x "/tmp/pd/bin/$t" ] || { echo "$t: not in the bundle" >&2; continue; }
        timeout "$(limit 120)" /tmp/pd/run "$t" >"$res/$t.txt" 2>&1
        echo "$t: exit $? (0 passed, 77 skipped)" >&2
        tail -5 "$res/$t.txt" >&2
      done ;;
    analyze:*)
      t=${step#analyze:}
      for w in ${ANALYZE_WORKLOADS:-mm512 conv_r50_2 conv_pw dwconv_mb}; do
        timeout "$(limit 120)" "${p[@]}" analyze "$w" --threads "$t" --sample 0.01 -o "$res/analyze-$w-t$t.json" \
          2>>"$res/analyze.log"
        echo "analyze $w at $t threads: exit $?, $(md5sum <"$res/analyze-$w-t$t.json" | cut -c1-12)" >&2
      done ;;
    *) echo "unknown step $step" >&2 ;;
  esac
done
echo "== done at ${SECONDS}s" >&2
[ -n "${OUT:-}" ] && tar -czf "$OUT/results.tgz" -C "$res" .
