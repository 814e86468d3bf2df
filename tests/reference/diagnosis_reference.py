#!/usr/bin/env python3
"""Reference figures for the diagnosis's wait-for split, computed from the raw events with the
standard library only (it shares no code with the C++): the steps and each step's device-busy time.

Steps: every ProfilerStep#N annotation (ts .. ts+dur; one per distinct window), each running until
it completes: until the GPU work it launched ends, if later (the work correlated with the first
runtime/driver call of each correlation that starts in the step's window, cut at the next step's
start), and from where the previous step completed, if that is later; else, with two or
more Optimizer.step#... (user_annotation or cpu_op), iterations ending where each ends (the first
from the trace's start, what follows the last one its own step); else one step over the profiler's
recorded span ("PyTorch Profiler (N)") together with the first to the last event (complete events
with a duration, GPU work even without one; the profiler's own overhead and instant events left out).
Per step also each device's (pid's) busy time and the collectives' time (NCCL/RCCL kernels, by name)
that compute kernels overlapped. Device busy: the union of the device work inside the step: cat kernel, gpu_memcpy, gpu_memset
(and the older Kernel, Memcpy, Memset); MTIA's command-processor events (cat mtia_ccp_events) but
for its stream waits and records (event_wait, event_record).

Usage: diagnosis_reference.py TRACE [TRACE ...] OUT_DIR  -> OUT_DIR/<trace file name>.json
"""
import gzip
import json
import os
import re
import sys
from decimal import Decimal

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
STEP = re.compile(r"^ProfilerStep#\d+$")


def ns(v):
    return int(Decimal(str(v)) * 1000)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union_within(intervals, lo, hi):
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in intervals if b > lo and a < hi)
    total, cur_a, cur_b = 0, None, None
    for a, b in clipped:
        if b <= a:
            continue
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total


def merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def intersect(xs, ys):
    out, i, j = [], 0, 0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if b > a:
            out.append((a, b))
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return out


def reference(path):
    events = [e for e in load(path) if isinstance(e, dict) and e.get("ph") == "X" and
              isinstance(e.get("ts"), (int, Decimal)) and not isinstance(e.get("ts"), bool)]
    device, steps, lo, hi, optimizer_ends = [], set(), None, None, set()
    first_call, work_end = {}, {}  # correlation -> start of its first runtime/driver call; its GPU work's end
    by_device, comm, compute = {}, [], []
    span_lo, span_hi = None, None  # the profiler's recorded span
    for e in events:
        start = ns(e["ts"])
        dur = e.get("dur")
        dur = ns(dur) if isinstance(dur, (int, Decimal)) and not isinstance(dur, bool) else 0
        cat, name = e.get("cat", ""), e.get("name", "")
        is_device = cat in DEVICE_CATS or (cat == "mtia_ccp_events" and name not in ("event_wait", "event_record"))
        corr = e.get("args", {}).get("correlation") if isinstance(e.get("args"), dict) else None
        if isinstance(corr, int) and not isinstance(corr, bool) and corr > 0:
            if cat in ("cuda_runtime", "cuda_driver", "Runtime"):
                first_call[corr] = min(first_call.get(corr, start), start)
            elif cat in DEVICE_CATS:
                work_end[corr] = max(work_end.get(corr, start + dur), start + dur)
        if is_device and dur > 0:
            device.append((start, start + dur))
            by_device.setdefault(e.get("pid"), []).append((start, start + dur))
            if cat in ("kernel", "Kernel"):
                lowered = name.lower() if isinstance(name, str) else ""
                (comm if ("nccl" in lowered or "rccl" in lowered) else compute).append((start, start + dur))
            elif cat == "mtia_ccp_events":
                compute.append((start, start + dur))
        # 2021-era Kineto wrote ops (and ProfilerStep#N) as cat "Operator".
        if cat in ("user_annotation", "cpu_op", "Operator") and isinstance(name, str) and STEP.match(name):
            steps.add((start, start + dur, name))
        if cat in ("user_annotation", "cpu_op") and isinstance(name, str) and name.startswith("Optimizer.step#") \
                and dur > 0:
            optimizer_ends.add(start + dur)
        profiler_span = isinstance(name, str) and name.startswith("PyTorch Profiler")
        if profiler_span and cat not in DEVICE_CATS and dur > 0:
            span_lo = start if span_lo is None else min(span_lo, start)
            span_hi = start + dur if span_hi is None else max(span_hi, start + dur)
        if cat not in ("overhead", "cpu_instant_event") and not profiler_span and (dur > 0 or cat in DEVICE_CATS):
            lo = start if lo is None else min(lo, start)
            hi = start + dur if hi is None else max(hi, start + dur)
    if steps:
        host = sorted(steps)
        gpu_end = [None] * len(host)
        for corr, t in first_call.items():
            if corr not in work_end:
                continue
            for i, (a, b, _) in enumerate(host):
                limit = min(b, host[i + 1][0]) if i + 1 < len(host) else b
                if a <= t < limit:
                    gpu_end[i] = work_end[corr] if gpu_end[i] is None else max(gpu_end[i], work_end[corr])
        windows, completed = [], None
        for (a, b, n), g in zip(host, gpu_end):
            start = a if completed is None else max(a, completed)
            end = max([x for x in (b, g, completed) if x is not None])
            completed = end
            windows.append((start, end, n))
        source = "profiler_steps"
    elif len(optimizer_ends) >= 2 and lo is not None and lo < hi:
        ends = sorted(optimizer_ends)
        windows, start = [], lo
        for i, end in enumerate(ends):
            windows.append((start, end, "iteration %d" % (i + 1)))
            start = end
        if start < hi:
            windows.append((start, hi, "after the last Optimizer.step"))
        source = "optimizer_steps"
    else:
        if lo is not None and span_lo is not None:
            lo, hi = min(lo, span_lo), max(hi, span_hi)
        windows = [(lo, hi, "whole trace")] if lo is not None and lo < hi else []
        source = "whole_trace"
    overlapped = intersect(merge(comm), merge(compute))

    def step(a, b, n):
        devices = []
        for dev in sorted(by_device, key=lambda d: (isinstance(d, str), d)):
            busy = union_within(by_device[dev], a, b)
            if busy > 0:
                devices.append({"device": dev, "busy_ns": busy})
        return {"name": n, "start_ns": a, "end_ns": b, "device_busy_ns": union_within(device, a, b),
                "communication_overlapped_ns": union_within(overlapped, a, b), "devices": devices}

    return {"trace": os.path.basename(path), "step_source": source, "steps": [step(a, b, n) for a, b, n in windows]}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[-1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[1:-1]:
        ref = reference(path)
        with open(os.path.join(out, os.path.basename(path) + ".json"), "w") as f:
            json.dump(ref, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
