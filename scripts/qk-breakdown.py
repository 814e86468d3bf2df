#!/usr/bin/env python3
"""QK MATMUL's make-up in attnscope traces, iteration by iteration.

For each ProfilerStep#N of a run's trace (the trace pass marks every measured
iteration so), the ops and CUDA calls from the iteration's first op up to
SCALE's first op: how long they span, each CUDA call by name, and the
transpose / matmul / bmm durations, as medians over the iterations. Used for
issue 17's bf16 findings (docs/timing-methods.md); traces from
scripts/gpu-ablate.sh (ablate-traces.tgz).
  scripts/qk-breakdown.py TRACE.json [...]
"""
import collections
import statistics
import sys

from tracefile import load

SCALE_FIRST = ("aten::scalar_tensor", "aten::div", "aten::mul")  # device-tensor or host-scalar scale


def breakdown(path):
    ev = [e for e in load(path)["traceEvents"] if e.get("ph") == "X"]
    steps = {}
    for e in ev:  # the CUPTI-marked range when there is one, else the annotation
        if e["name"].startswith("ProfilerStep#") and (e["name"] not in steps or e.get("cat") == "Trace"):
            steps[e["name"]] = e
    host = sorted((e for e in ev if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver", "overhead")),
                  key=lambda e: e["ts"])
    rows = collections.defaultdict(list)
    for st in sorted(steps.values(), key=lambda e: e["ts"]):
        qk = []
        for e in host:
            if not (st["ts"] <= e["ts"] < st["ts"] + st["dur"]) or e.get("tid") != st.get("tid"):
                continue
            if e.get("cat") == "cpu_op" and e["name"] in SCALE_FIRST:
                break
            qk.append(e)
        if not qk:
            continue
        rows["span of its ops and calls"].append(max(e["ts"] + e["dur"] for e in qk) - qk[0]["ts"])
        calls = [e for e in qk if e.get("cat") in ("cuda_runtime", "cuda_driver")]
        rows["CUDA calls recorded"].append(len(calls))
        for e in calls:
            rows["call " + e["name"]].append(e["dur"])
        for e in qk:
            if e["name"] in ("aten::transpose", "aten::matmul", "aten::bmm"):
                rows[e["name"]].append(e["dur"])
    print(f"== {path.rsplit('/', 1)[-1]}: {len(steps)} iterations (us: median, min-max, count)")
    for k, v in rows.items():
        print(f"  {k:36s} {statistics.median(v):8.2f}  {min(v):8.2f}-{max(v):<8.2f} n={len(v)}")


for p in sys.argv[1:]:
    breakdown(p)
