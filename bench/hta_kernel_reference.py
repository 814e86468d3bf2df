#!/usr/bin/env python3
"""Records HTA's GPU kernel breakdown for the real traces of ../shared/traces/ext, once, so that
tests/core/test_views_ext.cpp can compare attnscope's kernel view with it without HTA in CI.

    python3 -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis==0.5.0
    /tmp/hta/bin/python bench/hta_kernel_reference.py ../shared/traces/ext tests/data/ext/hta_kernels

For each trace HTA parses: TraceAnalysis(trace_dir=<a directory holding only that trace>,
include_last_profiler_step=True).get_gpu_kernel_breakdown(visualize=False, num_kernels=100000, include_memory_kernels=True,
duration_ratio=1.0), one row per kernel name: sum, mean, min, max (us) and the count
(sum / mean, rounded). Traces HTA cannot read are listed in _skipped.json with its error.

HTA's scope: with two or more ProfilerStep#N it keeps only the GPU work whose launching call
(same correlation) started at or before the end of the last step (the default,
include_last_profiler_step=False, also drops the last step); attnscope's kernel view takes the
same scope with `kernels --until-last-step`. HTA floors sub-microsecond times to whole
microseconds, so on traces with nanosecond timestamps its figures differ from the exact ones by
up to 1 us per call.
"""

import json
import os
import shutil
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis


def main(argv):
    src, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    skipped = {}
    for f in sorted(os.listdir(src)):
        if f.startswith("NEG_") or not f.endswith((".json", ".json.gz")):
            continue
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(os.path.join(src, f), d)
            try:
                a = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
                _, km = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=100000,
                                                   include_memory_kernels=True, duration_ratio=1.0)
            except Exception as e:  # noqa: BLE001 - record why HTA gave up on it
                skipped[f] = f"{type(e).__name__}: {e}"[:300]
                continue
        rows = []
        for _, r in km.iterrows():
            if r["name"] == "others":
                continue
            mean = float(r["mean (us)"])
            rows.append({"name": r["name"], "kernel_type": r["kernel_type"], "sum_us": float(r["sum (us)"]),
                         "mean_us": mean, "min_us": float(r["min (us)"]), "max_us": float(r["max (us)"]),
                         "count": round(float(r["sum (us)"]) / mean) if mean else 0})
        if not rows:
            skipped[f] = "no GPU kernels"
            continue
        with open(os.path.join(out, f + ".json"), "w") as fh:
            json.dump({"trace": f, "hta_version": "0.5.0", "kernels": rows}, fh, indent=1)
            fh.write("\n")
        print(f"{f}: {len(rows)} kernel names")
    with open(os.path.join(out, "_skipped.json"), "w") as fh:
        json.dump(skipped, fh, indent=1)
        fh.write("\n")
    for f, why in skipped.items():
        print(f"skipped {f}: {why}")


if __name__ == "__main__":
    main(sys.argv)
