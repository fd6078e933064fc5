#!/bin/sh
# The target commands end to end: show/diff/validate on shipped files, errors that name the
# JSON path, characterize --quick writing a valid file, an unwritable path and --gpu without a
# GPU failing with exit 1 and a clear message (and no partial file); --update merging a partial
# characterization into a file and refusing another machine's file.
set -u
portent="$1"; src="$2"; tmp=$(mktemp -d); fails=0
trap 'rm -rf "$tmp"' EXIT
check() { if ! eval "$2"; then echo "FAILED: $1"; fails=$((fails + 1)); fi; }

"$portent" targets show "$src/targets/amd-zen4.json" > "$tmp/show.txt"; rc=$?
check "targets show exits 0" '[ $rc -eq 0 ]'
check "targets show prints the L2 row" 'grep -q "^  L2 " "$tmp/show.txt"'
check "targets show prints fma rows" 'grep -q "fma  *f32  *512" "$tmp/show.txt"'
"$portent" targets diff "$src/targets/amd-zen4.json" "$src/targets/amd-zen2.json" > "$tmp/diff.txt"; rc=$?
check "targets diff exits 0" '[ $rc -eq 0 ]'
check "targets diff flags the FMA latency" 'grep -q "fma f32 256 lat .*4.00 .*5.00 .*+25.0%  \*" "$tmp/diff.txt"'
sed 's/"latency_cycles": 14/"latency_cycles": -14/' "$src/targets/amd-zen4.json" > "$tmp/bad.json"
"$portent" targets validate "$tmp/bad.json" 2> "$tmp/bad.txt"; rc=$?
check "validate of a bad file exits 2" '[ $rc -eq 2 ]'
check "the error names the JSON path" 'grep -q "caches\[1\].latency_cycles: -14 is out of range" "$tmp/bad.txt"'
head -c 300 "$src/targets/amd-zen4.json" > "$tmp/cut.json"
"$portent" targets show "$tmp/cut.json" 2> "$tmp/cut.txt"; rc=$?
check "a truncated file is refused" '[ $rc -eq 2 ] && grep -q "not valid JSON" "$tmp/cut.txt"'

"$portent" characterize -o /nonexistent-dir/t.json --quick 2> "$tmp/nowrite.txt"; rc=$?
check "unwritable path exits 1" '[ $rc -eq 1 ]'
check "unwritable path is named" 'grep -q "/nonexistent-dir/t.json: cannot write" "$tmp/nowrite.txt"'
if [ -e /dev/nvidiactl ]; then echo "(a GPU is present: the no-GPU error is not checked here)"; else
  "$portent" characterize --gpu -o "$tmp/gpu.json" 2> "$tmp/gpu.txt"; rc=$?
  check "--gpu without a GPU exits 1" '[ $rc -eq 1 ]'
  check "--gpu says there is no GPU" 'grep -q "no GPU" "$tmp/gpu.txt"'
  check "--gpu leaves no file" '[ ! -e "$tmp/gpu.json" ]'
fi
"$portent" characterize --quick --reps 2 --only add:f32,fma:f64 --skip mlp -o "$tmp/q.json" 2> "$tmp/q.txt"; rc=$?
check "characterize --quick exits 0" '[ $rc -eq 0 ]'
check "progress goes to stderr" 'grep -q "core clock" "$tmp/q.txt"'
check "the written file validates" '"$portent" targets validate "$tmp/q.json" > /dev/null'
check "no temporary file is left" '[ -z "$(ls "$tmp" | grep tmp)" ]'
check "--skip mlp: no strided walks" '! grep -q strided_walks "$tmp/q.json"'
"$portent" targets show "$tmp/q.json" > "$tmp/q_show.txt"
# --only with a part (mlp) and a class: that part, that row, nothing else
"$portent" characterize --update "$tmp/q.json" --quick --reps 2 --only mul:i64:64,mlp 2> "$tmp/u.txt"; rc=$?
check "characterize --update exits 0" '[ $rc -eq 0 ]'
check "--update says what it replaced" 'grep -q "0 instruction rows measured again, 1 added, misses in flight$" "$tmp/u.txt"'
check "--only mlp measured no memory bandwidth" '! grep -q "bandwidth L1" "$tmp/u.txt" && grep -q "misses in flight, L2" "$tmp/u.txt"'
"$portent" targets show "$tmp/q.json" > "$tmp/u_show.txt"
check "the updated file has the strided walks" 'grep -q "strided walk, stride 4096 B, 4 KiB pages" "$tmp/u_show.txt"'
check "the updated file has L2's misses in flight" 'awk "\$1 == \"L2\" {print \$9}" "$tmp/u_show.txt" | grep -E -q "^[0-9]+\.[0-9]+$"'
check "the caches' latencies were kept" '[ "$(awk "/^  L[12] / {print \$7, \$8}" "$tmp/q_show.txt")" = "$(awk "/^  L[12] / {print \$7, \$8}" "$tmp/u_show.txt")" ]'
check "the updated file has the new row" 'grep -q "mul  *i64  *64" "$tmp/u_show.txt"'
check "the updated file kept the old rows" 'grep -q "fma  *f64" "$tmp/u_show.txt"'
# --only l1rmw: the read-modify-write figures join the file's set walks, which stay as they were
if grep -q '"set_walks"' "$tmp/q.json"; then
  "$portent" characterize --update "$tmp/q.json" --quick --reps 2 --only l1rmw 2> "$tmp/r.txt"; rc=$?
  check "--only l1rmw exits 0 and says so" '[ $rc -eq 0 ] && grep -q "0 added, L1 read-modify-write walks$" "$tmp/r.txt"'
  "$portent" targets show "$tmp/q.json" > "$tmp/r_show.txt"
  check "--only l1rmw: every set walk has its figure" '[ "$(grep -c "set walk, stride" "$tmp/r_show.txt")" -gt 0 ] && ! grep "set walk, stride" "$tmp/r_show.txt" | grep -v -q "read-modify-write"'
  check "--only l1rmw kept the set walks' load figures" '[ "$(grep "set walk, stride" "$tmp/u_show.txt" | cut -d, -f1-4)" = "$(grep "set walk, stride" "$tmp/r_show.txt" | cut -d, -f1-4)" ]'
fi
# --only l1loads: the columns read by 1..16 loads join the file, whose set walks stay as they were
if grep -q '"set_walks"' "$tmp/q.json"; then
  "$portent" characterize --update "$tmp/q.json" --quick --reps 2 --only l1loads 2> "$tmp/l.txt"; rc=$?
  check "--only l1loads exits 0 and says so" '[ $rc -eq 0 ] && grep -q "0 added, L1 set walks by loads$" "$tmp/l.txt"'
  "$portent" targets show "$tmp/q.json" > "$tmp/l_show.txt"
  check "--only l1loads: columns read by 1 and by 16 loads" 'grep -q "read by 1 load(s) at once: [0-9]" "$tmp/l_show.txt" && grep -q "read by 16 load(s) at once: [0-9]" "$tmp/l_show.txt"'
  check "--only l1loads kept the set walks" '[ "$(grep "set walk, stride" "$tmp/r_show.txt")" = "$(grep "set walk, stride" "$tmp/l_show.txt")" ]'
fi
cp "$src/targets/arm-neoverse-n1.json" "$tmp/arm.json"
"$portent" characterize --update "$tmp/arm.json" --quick --only add:i64:64 2> "$tmp/arm.txt"; rc=$?
check "--update of another machine's file exits 2" '[ $rc -eq 2 ] && grep -q "this machine is" "$tmp/arm.txt"'
check "--update of another machine's file leaves it as it was" 'cmp -s "$tmp/arm.json" "$src/targets/arm-neoverse-n1.json"'
"$portent" characterize --bogus 2> /dev/null; rc=$?
check "an unknown option exits 2" '[ $rc -eq 2 ]'
"$portent" characterize --skip memory,bogus -o "$tmp/skip.json" 2> "$tmp/skip.txt"; rc=$?
check "--skip with an unknown part exits 2" '[ $rc -eq 2 ] && grep -q "unknown part .bogus." "$tmp/skip.txt"'
check "--skip with an unknown part leaves no file" '[ ! -e "$tmp/skip.json" ]'
exit $fails
