#!/usr/bin/env python3
"""Independent reference numbers for attnscope's per-step analysis of torch.profiler traces.

Standard library only (Python 3.11). The rules are spelled out in tests/reference/README.md;
this file is meant to be read next to it.

Usage:
    python3 tests/reference/explain_reference.py TRACE_DIR_OR_FILE [...] OUTDIR

A directory argument processes every *.json / *.json.gz in it except NEG_* files (negative
controls that are not Kineto traces). Each trace gives OUTDIR/<trace file name>.json, e.g.
hta_sampled_rank-0.json.gz -> hta_sampled_rank-0.json.gz.json.
"""

import bisect
import decimal
import gzip
import heapq
import json
import os
import re
import sys
from decimal import Decimal

# --- event families, by "cat" exactly as written ---------------------------------------------
CPU_OP = {"cpu_op", "user_annotation", "Operator"}  # Operator: 2021-era Kineto
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime"}  # Runtime: 2021-era Kineto
KERNEL = {"kernel", "Kernel"}
MEMCPY = {"gpu_memcpy", "Memcpy"}
MEMSET = {"gpu_memset", "Memset"}
GPU = KERNEL | MEMCPY | MEMSET  # gpu_user_annotation is deliberately in no family
SYNC_RECORD = "cuda_sync"
STEP_CATS = {"user_annotation", "Operator"}

STEP_RE = re.compile(r"ProfilerStep#[0-9]+")
SYNCHRONIZE_RE = re.compile(r"(cuda|hip|cu)[A-Za-z]*Synchronize")
MEMCPY_PREFIXES = ("cudaMemcpy", "hipMemcpy", "cuMemcpy")
GRAPH_LAUNCHES = {"cudaGraphLaunch", "hipGraphLaunch"}

rounded_times = 0  # how many ts/dur values had a 4th decimal (none in the shipped traces)


def to_ns(us):
    """Microseconds (int or Decimal, up to 3 decimals) -> integer nanoseconds, exactly."""
    global rounded_times
    ns = Decimal(us) * 1000
    if ns != ns.to_integral_value():
        rounded_times += 1
        ns = ns.to_integral_value(rounding=decimal.ROUND_HALF_UP)  # half away from zero
    return int(ns)


def is_number(v):
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool)


class Ev:
    """One complete ("X") event, times in ns. idx = position among the X events (file order)."""

    __slots__ = ("idx", "cat", "name", "thread", "start", "dur", "end", "corr")

    def __init__(self, idx, e):
        self.idx = idx
        self.cat = e.get("cat")
        self.name = str(e.get("name", ""))
        self.thread = (str(e.get("pid")), str(e.get("tid")))
        self.start = to_ns(e["ts"])
        self.dur = to_ns(e["dur"]) if is_number(e.get("dur")) else 0  # missing dur = 0
        self.end = self.start + self.dur
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        corr = args.get("correlation")
        self.corr = corr if isinstance(corr, int) and not isinstance(corr, bool) and corr > 0 else None


def load_events(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":  # gzip by magic bytes, whatever the file name says
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)  # ints stay int, floats become exact Decimals
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ValueError(f"{path}: no traceEvents array")
    xs = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and is_number(e.get("ts"))]
    return [Ev(i, e) for i, e in enumerate(xs)]


def overlap(s, e, lo, hi):
    return max(0, min(e, hi) - max(s, lo))


def merged_busy(gpu):
    """Union of GPU intervals with dur > 0; touching intervals merge. Sorted, disjoint."""
    out = []
    for s, e in sorted((a.start, a.end) for a in gpu if a.dur > 0):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def busy_in(merged, merged_ends, lo, hi):
    i = bisect.bisect_right(merged_ends, lo)  # first interval ending after lo
    total = 0
    while i < len(merged) and merged[i][0] < hi:
        total += overlap(merged[i][0], merged[i][1], lo, hi)
        i += 1
    return total


def enclosing_ops(ops_by_thread, calls):
    """For each call: names of CPU ops on its thread with op.start <= call.start and
    call.end <= op.end, outermost first. Sweep per thread in start order with a heap of open ops."""
    result = {}
    calls_by_thread = {}
    for c in calls:
        calls_by_thread.setdefault(c.thread, []).append(c)
    for thread, tcalls in calls_by_thread.items():
        # ops sort before calls that start at the same time (kind 0 < kind 1)
        items = [(o.start, 0, o.idx, o) for o in ops_by_thread.get(thread, [])]
        items += [(c.start, 1, c.idx, c) for c in tcalls]
        items.sort(key=lambda t: t[:3])
        open_ops = {}  # idx -> op, ops with start <= now and end >= now
        heap = []  # (end, idx)
        for start, kind, idx, ev in items:
            while heap and heap[0][0] < start:
                open_ops.pop(heapq.heappop(heap)[1], None)
            if kind == 0:
                open_ops[idx] = ev
                heapq.heappush(heap, (ev.end, idx))
            else:
                encl = [o for o in open_ops.values() if o.end >= ev.end]
                encl.sort(key=lambda o: (o.start, -o.end, o.idx))  # outermost first
                result[ev.idx] = [o.name for o in encl]
    return result


def analyse(path):
    evs = load_events(path)
    ops = [e for e in evs if e.cat in CPU_OP]
    calls = [e for e in evs if e.cat in RUNTIME]
    gpu = [e for e in evs if e.cat in GPU]
    sync_records = [e for e in evs if e.cat == SYNC_RECORD]

    # launching call of each correlation: smallest start, ties -> first in file order
    launcher = {}
    for c in calls:
        if c.corr is not None and (c.corr not in launcher or c.start < launcher[c.corr].start):
            launcher[c.corr] = c
    # the copy activity of a memcpy call (first in file order if several)
    copy_of = {}
    for a in gpu:
        if a.cat in MEMCPY and a.corr is not None:
            copy_of.setdefault(a.corr, a)

    # synchronizing calls and their labels
    sync_calls = 0
    syncs = []  # (call, label)
    for c in calls:
        if c.dur <= 0:
            continue
        copy = copy_of.get(c.corr)
        strict = SYNCHRONIZE_RE.fullmatch(c.name) is not None
        is_memcpy = c.name.startswith(MEMCPY_PREFIXES)
        blocking_copy = is_memcpy and (
            "Async" not in c.name or (copy is not None and "-> Pageable" in copy.name)
        )
        sync_calls += strict
        if strict or blocking_copy:
            label = c.name
            if is_memcpy and copy is not None and "(" in copy.name:
                label += " " + copy.name[copy.name.index("(") :]
            syncs.append((c, label))

    # sync-wait groups: enclosing CPU op names (minus ProfilerStep#N) > label
    ops_by_thread = {}
    for o in ops:
        ops_by_thread.setdefault(o.thread, []).append(o)
    encl = enclosing_ops(ops_by_thread, [c for c, _ in syncs])
    groups = {}
    for c, label in syncs:
        names = [n for n in encl[c.idx] if not STEP_RE.fullmatch(n)]
        key = " > ".join(names + [label]) if names else "(no op) > " + label
        g = groups.setdefault(key, {"key": key, "count": 0, "total_ns": 0, "max_ns": 0})
        g["count"] += 1
        g["total_ns"] += c.dur
        g["max_ns"] = max(g["max_ns"], c.dur)

    # per-step numbers
    steps = sorted(
        (o for o in ops if o.cat in STEP_CATS and STEP_RE.fullmatch(o.name)), key=lambda o: (o.start, o.idx)
    )
    launched = sorted(
        ((launcher[a.corr].start, a.idx, a) for a in gpu if a.corr in launcher), key=lambda t: t[:2]
    )
    launch_starts = [t[0] for t in launched]
    by_start = sorted(((a.start, a.idx, a) for a in gpu if a.corr in launcher), key=lambda t: t[:2])
    by_start_starts = [t[0] for t in by_start]
    merged = merged_busy(gpu)
    merged_ends = [e for _, e in merged]
    sync_sorted = sorted(((c.start, c.idx, c) for c, _ in syncs), key=lambda t: t[:2])
    sync_starts = [t[0] for t in sync_sorted]

    out_steps = []
    for st in steps:
        lo, hi = st.start, st.end
        s = {"name": st.name, "host_start_ns": lo, "host_end_ns": hi}
        mine = [t[2] for t in launched[bisect.bisect_left(launch_starts, lo) : bisect.bisect_left(launch_starts, hi)]]
        kinds = {"kernel_ns": 0, "memcpy_ns": 0, "memset_ns": 0, "communication_ns": 0}
        for a in mine:
            if a.cat in MEMCPY:
                kinds["memcpy_ns"] += a.dur
            elif a.cat in MEMSET:
                kinds["memset_ns"] += a.dur
            elif "nccl" in a.name.lower() or "rccl" in a.name.lower():
                kinds["communication_ns"] += a.dur
            else:
                kinds["kernel_ns"] += a.dur
        s["launches"] = len(mine)
        s["gpu_attributed_ns"] = sum(a.dur for a in mine)
        s.update(kinds)
        s["gpu_busy_ns"] = busy_in(merged, merged_ends, lo, hi)
        s["idle_ns"] = (hi - lo) - s["gpu_busy_ns"]
        s["spill_out_ns"] = sum(max(0, a.end - max(a.start, hi)) for a in mine)
        # launched before the step (by anyone) and running inside it; such an activity starts before hi
        earlier = by_start[: bisect.bisect_left(by_start_starts, hi)]
        s["spill_in_ns"] = sum(
            overlap(a.start, a.end, lo, hi) for _, _, a in earlier if launcher[a.corr].start < lo
        )
        in_step = [t[2] for t in sync_sorted[bisect.bisect_left(sync_starts, lo) : bisect.bisect_left(sync_starts, hi)]]
        s["sync_wait_ns"] = sum(c.dur for c in in_step)
        s["sync_waits"] = len(in_step)
        out_steps.append(s)

    gpu_sum = sum(a.dur for a in gpu)
    sync_sum = sum(r.dur for r in sync_records)
    if any(c.name.startswith("hip") for c in calls):
        runtime = "hip"
    else:
        runtime = "cuda" if calls else "none"
    return {
        "file": os.path.basename(path),
        "has_profiler_steps": bool(out_steps),
        "steps": out_steps,
        "gpu_activities": len(gpu),
        "gpu_activity_sum_ns": gpu_sum,
        "cuda_sync_count": len(sync_records),
        "cuda_sync_sum_ns": sync_sum,
        "expected_torch_self_device_total_ns": gpu_sum + sync_sum,
        "runtime": runtime,
        "sync_calls": sync_calls,
        "sync_waits_total": len(syncs),
        "sync_groups": sorted(groups.values(), key=lambda g: (-g["total_ns"], g["key"])),
        "cuda_graph_launches": sum(1 for c in calls if c.name in GRAPH_LAUNCHES),
        "graph_kernels": sum(1 for a in gpu if a.corr in launcher and launcher[a.corr].name in GRAPH_LAUNCHES),
    }


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    *inputs, outdir = argv[1:]
    paths = []
    for p in inputs:
        if os.path.isdir(p):
            paths += sorted(
                os.path.join(p, f)
                for f in os.listdir(p)
                if f.endswith((".json", ".json.gz")) and not f.startswith("NEG_")
            )
        else:
            paths.append(p)
    os.makedirs(outdir, exist_ok=True)
    for p in paths:
        r = analyse(p)
        with open(os.path.join(outdir, r["file"] + ".json"), "w") as f:
            json.dump(r, f, indent=1)
            f.write("\n")
        print(f"{r['file']}: {len(r['steps'])} steps, {r['gpu_activities']} GPU activities, "
              f"{r['sync_waits_total']} sync waits")
    if rounded_times:
        print(f"note: {rounded_times} ts/dur values had a 4th decimal and were rounded half away from zero")


if __name__ == "__main__":
    main(sys.argv)
