#!/usr/bin/env python3
"""Reads a portent TLP / MTL-TLP weights file in PyTorch and checks it against portent.

usage: tlp_torch_check.py MODEL.safetensors SCORES.jsonl [--tolerance T]

MODEL is read as the safetensors format says (checked as the reference reader,
huggingface/safetensors' SafeTensors::read_metadata and Metadata::validate, checks it: the
header length at most 100,000,000 and inside the file, UTF-8 JSON, `__metadata__` strings only,
known dtypes, tensors contiguous from offset 0 in offset order, each exactly its shape's bytes,
the last one ending the file), its tensors become torch tensors (torch.frombuffer), and an
nn.Module built from torch's own layers (nn.Linear, nn.MultiheadAttention or nn.LSTM) with the
parameter names docs/learning.md gives takes them with load_state_dict(strict=True): every
name and shape must match, none missing, none left over. SCORES is `portent eval --model MODEL
--scores SCORES.jsonl`: each sample's raw features and every head's score. The network
recomputes the scores from the features; exit 0 when every one is within T (default 1e-3) of
portent's, relative to the largest |score|, 1 otherwise, 2 on a malformed file.
"""
import argparse
import json
import struct
import sys

import torch
from torch import nn

MAX_HEADER = 100_000_000
DTYPES = {"BOOL": (1, torch.bool), "U8": (1, torch.uint8), "I8": (1, torch.int8), "I16": (2, torch.int16),
          "F16": (2, torch.float16), "BF16": (2, torch.bfloat16), "I32": (4, torch.int32), "F32": (4, torch.float32),
          "F64": (8, torch.float64), "I64": (8, torch.int64)}


class Malformed(Exception):
    pass


def read_safetensors(path):
    """Returns (tensors by name, metadata) or raises Malformed naming the file and the fault."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise Malformed(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > MAX_HEADER:
        raise Malformed(f"{path}: header length {n} above {MAX_HEADER}")
    if 8 + n > len(buf):
        raise Malformed(f"{path}: header length {n} runs past the file ({len(buf)} bytes)")
    try:
        header = json.loads(buf[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Malformed(f"{path}: header is not UTF-8 JSON ({e})")
    if not isinstance(header, dict):
        raise Malformed(f"{path}: header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise Malformed(f"{path}: __metadata__ is not a map of strings")
    infos = []
    for name, info in header.items():
        try:
            size, dtype = DTYPES[info["dtype"]]
            shape = [int(s) for s in info["shape"]]
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise Malformed(f"{path}: tensor {name}: dtype, shape or data_offsets missing or malformed")
        if any(s < 0 for s in shape):
            raise Malformed(f"{path}: tensor {name}: negative dimension")
        infos.append((begin, end, name, size, dtype, shape))
    infos.sort()
    data = bytearray(buf[8 + n:])
    at, tensors = 0, {}
    for begin, end, name, size, dtype, shape in infos:
        if begin != at or end < begin:
            raise Malformed(f"{path}: tensor {name}: data_offsets [{begin}, {end}] do not follow the previous tensor ({at})")
        count = 1
        for s in shape:
            count *= s
        if end - begin != count * size:
            raise Malformed(f"{path}: tensor {name}: {end - begin} bytes for shape {shape} of {size}-byte elements")
        if end > len(data):
            raise Malformed(f"{path}: tensor {name}: data_offsets end at {end}, past the data ({len(data)} bytes)")
        at = end
        t = torch.frombuffer(data, dtype=dtype, count=count, offset=begin) if count else torch.empty(0, dtype=dtype)
        tensors[name] = t.reshape(shape).clone()
    if at != len(data):
        raise Malformed(f"{path}: the tensors end at {at}, the data at {len(data)}")
    return tensors, meta or {}


class Norm(nn.Module):
    def __init__(self, emb):
        super().__init__()
        self.register_buffer("mean", torch.zeros(emb))
        self.register_buffer("std", torch.ones(emb))


class Head(nn.Module):
    def __init__(self, dim, widths):
        super().__init__()
        layers, prev = [], dim
        for w in widths:
            layers += [nn.Linear(prev, w), nn.ReLU()]
            prev = w
        self.decoder = nn.Sequential(*layers, nn.Linear(prev, 1))


class TLP(nn.Module):
    """TLP's AttentionModule as docs/learning.md describes portent's: encoder, attention (or LSTM)
    with a residual connection, residual blocks, one decoder per head, a sum over the steps."""

    def __init__(self, c):
        super().__init__()
        layers, prev = [], c["emb"]
        for w in c["encoder"]:
            layers += [nn.Linear(prev, w), nn.ReLU()]
            prev = w
        self.encoder = nn.Sequential(*layers)
        self.lstm_backbone = c["backbone"] == "lstm"
        if self.lstm_backbone:
            self.lstm = nn.LSTM(prev, prev, batch_first=True)
        else:
            self.attention = nn.MultiheadAttention(prev, c["heads"], batch_first=True)
        self.res = nn.ModuleList(nn.Linear(prev, prev) for _ in range(c["res_blocks"]))
        self.head = nn.ModuleList(Head(prev, c["decoder"]) for _ in range(c["outputs"]))
        self.norm = Norm(c["emb"])

    def forward(self, raw, n_rows):
        x = (raw - self.norm.mean) / self.norm.std
        keep = torch.arange(raw.shape[1])[None, :] < n_rows[:, None]  # padding rows are zeros
        h = self.encoder(x * keep[:, :, None])
        r = (self.lstm(h)[0] if self.lstm_backbone else self.attention(h, h, h, need_weights=False)[0]) + h
        for lin in self.res:
            r = torch.relu(lin(r)) + r
        return torch.stack([hd.decoder(r).squeeze(-1).sum(dim=1) for hd in self.head], dim=1)


def main(argv):
    ap = argparse.ArgumentParser(description="Reads a portent TLP weights file in PyTorch and checks it against portent.")
    ap.add_argument("model")
    ap.add_argument("scores", help="portent eval --model MODEL --scores SCORES.jsonl")
    ap.add_argument("--tolerance", type=float, default=1e-3)
    a = ap.parse_args(argv[1:])
    args, tol = [a.model, a.scores], a.tolerance
    try:
        tensors, meta = read_safetensors(args[0])
    except (OSError, Malformed) as e:
        print(f"tlp_torch_check: {e}", file=sys.stderr)
        return 2
    if meta.get("format") != "portent-tlp":
        print(f"tlp_torch_check: {args[0]}: __metadata__ format is {meta.get('format')!r}, not portent-tlp", file=sys.stderr)
        return 2
    c = json.loads(meta["config"])
    model = TLP(c)
    try:
        model.load_state_dict(tensors, strict=True)
    except RuntimeError as e:
        print(f"tlp_torch_check: {args[0]}: not the documented module: {e}", file=sys.stderr)
        return 1
    model.eval()
    raws, rows, want = [], [], []
    with open(args[1]) as f:
        for line in f:
            s = json.loads(line)
            raws.append(s["x"])
            rows.append(s["n_rows"])
            want.append(s["scores"])
    if not raws:
        print(f"tlp_torch_check: {args[1]}: no sample", file=sys.stderr)
        return 2
    raw = torch.tensor(raws, dtype=torch.float32).reshape(len(raws), c["seq_len"], c["emb"])
    with torch.no_grad():
        got = model(raw, torch.tensor(rows))
    want = torch.tensor(want, dtype=torch.float32)
    scale = max(want.abs().max().item(), 1e-12)
    worst = ((got - want).abs().max() / scale).item()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args[0]}: {len(tensors)} tensors, {n_params} parameters, {c['backbone']} backbone, {c['outputs']} head(s); "
          f"PyTorch {torch.__version__} recomputed {len(raws)} x {c['outputs']} scores: largest difference "
          f"{worst:.3g} of the largest |score| ({scale:.4g})")
    if worst > tol:
        print(f"tlp_torch_check: above the tolerance {tol}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
