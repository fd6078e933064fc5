#!/bin/sh
# The weights file in PyTorch (scripts/tlp_torch_check.py): read as the safetensors reference
# reader checks it, loaded into torch's own layers with load_state_dict(strict=True), and the
# scores portent eval --scores wrote recomputed from the same features: attention and LSTM
# backbones, one head and an MTL-TLP model's two. A corrupted weight and a truncated file fail
# the check. Skipped (77) where no python3 has torch (scripts/install-deps.sh installs
# python3-torch).
portent="$1"
. "$(dirname "$0")/lib.sh"
py=
for p in python3 /usr/bin/python3; do
  command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' 2>/dev/null && { py=$p; break; }
done
[ -n "$py" ] || { echo "SKIP: no python3 with torch"; exit 77; }
check="scripts/tlp_torch_check.py"
gzip -dc data/learn/zen3/test-quiet.jsonl.gz | head -120 >"$tmp/z3.jsonl"
gzip -dc data/learn/zen4/test-quiet.jsonl.gz | head -120 >"$tmp/z4.jsonl"
check train-attention 0 "$portent" train tlp --data "$tmp/z3.jsonl" --epochs 2 --batch 16 --width 32 -o "$tmp/a.safetensors"
check train-lstm 0 "$portent" train tlp --data "$tmp/z3.jsonl" --epochs 2 --batch 16 --width 32 --backbone lstm \
  -o "$tmp/l.safetensors"
check train-mtl 0 "$portent" train mtl-tlp --data "$tmp/z3.jsonl" --data "$tmp/z4.jsonl" --target-platform znver3 \
  --fractions 1 --epochs 2 --batch 16 --width 32 -o "$tmp/m.safetensors"
for m in a l m; do
  data="--data $tmp/z3.jsonl"; [ $m = m ] && data="$data --data $tmp/z4.jsonl"
  check eval-$m 0 "$portent" eval --model "$tmp/$m.safetensors" $data --scores "$tmp/$m.jsonl"
  check torch-$m 0 "$py" "$check" "$tmp/$m.safetensors" "$tmp/$m.jsonl"
  has torch-$m "$tmp/out" "largest difference"
done
has torch-m "$tmp/out" "2 head(s)"
# one weight changed: the scores move, the check fails; a truncated file: malformed
"$py" - "$tmp/a.safetensors" "$tmp/bad.safetensors" <<'PY'
import json, struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", b[:8])[0]
o = json.loads(b[8:8 + n])["res.0.weight"]["data_offsets"][0] + 8 + n
b[o:o + 4] = struct.pack("<f", struct.unpack("<f", b[o:o + 4])[0] + 4.0)
open(sys.argv[2], "wb").write(b)
PY
check torch-changed 1 "$py" "$check" "$tmp/bad.safetensors" "$tmp/a.jsonl"
head -c 2000 "$tmp/a.safetensors" >"$tmp/short.safetensors"
check torch-truncated 2 "$py" "$check" "$tmp/short.safetensors" "$tmp/a.jsonl"
has torch-truncated "$tmp/err" "short.safetensors"
exit $fail
