#!/usr/bin/env python3
"""Prints docs/timing-methods.md's tables from the engine's H200 captures in
tests/data/h200/: per step, what each timing method reported (iteration 0),
and the stream-sync wait inside SCALE. Usage: scripts/timing-table.py > docs/timing-methods-tables.md"""
import glob, os, sys

from tracefile import load

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "h200")
steps = ["QK MATMUL", "SCALE", "SOFTMAX PASS", "AV MATMUL"]
methods = ["cupti", "events", "host", "host-sync"]


rows = []
for path in sorted(glob.glob(os.path.join(here, "*.json*"))):
    if ".torch." in path:
        continue
    d = load(path)
    a = d.get("attnscope")
    if not a:
        continue
    cfg = a["config"]
    wrap = [k for k, v in cfg["wrap"].items() if v] or ["none"]
    name = os.path.basename(path).split(".json")[0]
    syncs = [e["dur"] for e in d["traceEvents"] if e.get("name") == "cudaStreamSynchronize"]
    rows.append((name, ",".join(wrap), cfg["sync"], cfg["scale"], cfg["warmup"], a["timing"], syncs))

print("| capture | wrap | sync | scale | warm-up | method | " + " | ".join(steps) + " |")
print("| --- | --- | --- | --- | --- | --- | " + " | ".join(["---:"] * 4) + " |")
for name, wrap, sync, scale, warm, timing, _ in rows:
    for m in methods:
        if m not in timing:
            continue
        vals = timing[m]["steps"][0]
        print(f"| {name} | {wrap} | {sync} | {scale} | {warm} | {m} | " +
              " | ".join(f"{v / 1000:.1f}" for v in vals) + " |")
print()
print("| capture | wrap | cudaStreamSynchronize inside SCALE (us) |")
print("| --- | --- | ---: |")
for name, wrap, sync, scale, warm, _, syncs in rows:
    print(f"| {name} | {wrap} | {', '.join(f'{s:.1f}' for s in syncs) or 'none'} |")
