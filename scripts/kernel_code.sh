# Sourced by spill_misses.sh and ll_misses.sh. kernel_setup DIR TOOL: exe (DIR/kernel.exe, which
# `portent bench analyze --keep` leaves), tmp (a folder removed on exit), TOOL (scripts/TOOL.c)
# compiled into it, and kernel_code's lo, hi and stack_ops. kernel_code EXE TMP sets lo and hi (hex) to the
# address range of EXE's portent_* functions as valgrind loads it, and writes TMP/stack_ops, the
# addresses of their instructions that address the stack (%rsp: the register allocator's spills
# and reloads, which the target-neutral IR has not). Exits 2 without such functions.
# kernel_trace TOOL ARGS...: lackey's memory trace of exe piped into TOOL ARGS lo hi stack_ops.
kernel_code() {
  local exe=$1 tmp=$2 base=$((0x108000)) l h # valgrind loads a position-independent executable at 0x108000 on amd64
  read -r l h < <(nm -S "$exe" | python3 -c '
import sys
r = [(int(w[0], 16), int(w[0], 16) + int(w[1], 16)) for w in (l.split() for l in sys.stdin)
     if len(w) == 4 and w[2] in "tT" and w[3].startswith("portent_")]
print(min(a for a, _ in r) if r else 0, max(b for _, b in r) if r else 0)')
  [ "${h:-0}" -gt 0 ] || { echo "$(basename "$0"): no portent_* function in $exe" >&2; exit 2; }
  objdump -d --no-show-raw-insn "$exe" | python3 -c '
import sys
lo, hi, base = (int(x) for x in sys.argv[1:4])
for l in sys.stdin:
    w = l.split(":", 1)
    try:
        a = int(w[0], 16)
    except ValueError:
        continue
    if len(w) == 2 and lo <= a < hi and "(%rsp" in w[1]:
        print("%x" % (a + base))' "$l" "$h" "$base" > "$tmp/stack_ops"
  lo=$(printf %x $((l + base)))
  hi=$(printf %x $((h + base)))
}

kernel_setup() {
  exe=$1/kernel.exe
  [ -x "$exe" ] || { echo "$(basename "$0"): $exe not found (portent bench analyze --keep)" >&2; exit 2; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cc -O2 -o "$tmp/$2" "$(dirname "${BASH_SOURCE[0]}")/$2.c"
  kernel_code "$exe" "$tmp"
}

kernel_trace() {
  local tool=$1
  shift
  valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$exe" 3>&1 1>/dev/null 2>/dev/null |
    "$tmp/$tool" "$@" "$lo" "$hi" "$tmp/stack_ops"
}
