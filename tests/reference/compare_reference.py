#!/usr/bin/env python3
"""Independent reference numbers for `attnscope-cli compare` on two torch.profiler traces.

Standard library only (Python 3.11); the per-step figures come from explain_reference.py (its rules
are in tests/reference/README.md). What this adds, computed here from the raw events:

- steps are the ProfilerStep#N annotations of each trace, paired in time order;
- per-step medians and the 25th/75th percentiles (linear interpolation) of host time, GPU work
  launched, GPU busy, idle, sync wait, communication and spill out; the change is B's median - A's;
- per step (the sum inside the steps divided by the number of steps), B - A, for
  * kernels, copies and memsets by name, counted in the step whose window holds their launch call;
  * ops (cpu_op, user_annotation and runtime calls) by name, their Self CPU: the duration less that
    of the events directly inside it on the same thread, counted in the step holding its start;
    ProfilerStep#N is named ProfilerStep* (as torch's table does) and the DataLoader iterators
    (_SingleProcessDataLoaderIter / _MultiProcessingDataLoaderIter) are one role;
  * sync waits by cause (explain_reference's groups), in the step holding the call's start;
- a change is noise when it is smaller than the p25-p75 spread of the per-step values in both traces.

Usage:
    python3 tests/reference/compare_reference.py A B OUT.json
"""

import bisect
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explain_reference as er  # noqa: E402

DATALOADER_RE = re.compile(r"enumerate\(DataLoader\)#_\w*DataLoaderIter\.__next__")
METRICS = [
    ("host_ns", lambda s: s["host_end_ns"] - s["host_start_ns"]),
    ("gpu_work_ns", lambda s: s["gpu_attributed_ns"]),
    ("gpu_busy_ns", lambda s: s["gpu_busy_ns"]),
    ("idle_ns", lambda s: s["idle_ns"]),
    ("sync_wait_ns", lambda s: s["sync_wait_ns"]),
    ("communication_ns", lambda s: s["communication_ns"]),
    ("spill_out_ns", lambda s: s["spill_out_ns"]),
]


def percentile(values, q):
    v = sorted(values)
    if not v:
        return 0.0
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def spread(values):
    return {"n": len(values), "median": percentile(values, 0.5), "p25": percentile(values, 0.25),
            "p75": percentile(values, 0.75)}


def role(name):
    if er.STEP_RE.fullmatch(name):
        return "ProfilerStep*"
    if DATALOADER_RE.fullmatch(name):
        return "enumerate(DataLoader)#*.__next__"
    return name


def per_step_series(path, analysed):
    """(kind, key) -> list of per-step sums, one per step."""
    evs = er.load_events(path)
    steps = analysed["steps"]
    starts = [s["host_start_ns"] for s in steps]
    ends = [s["host_end_ns"] for s in steps]

    def step_at(t):
        i = bisect.bisect_right(starts, t) - 1
        return i if i >= 0 and t < ends[i] else -1

    series = {}

    def add(kind, key, i, v):
        series.setdefault((kind, key), [0] * len(steps))[i] += v

    # GPU work: by the step holding its launch call (the earliest call of its correlation).
    calls = [e for e in evs if e.cat in er.RUNTIME]
    launcher = {}
    for c in calls:
        if c.corr is not None and (c.corr not in launcher or c.start < launcher[c.corr].start):
            launcher[c.corr] = c
    for a in evs:
        if a.cat in er.GPU and a.corr in launcher:
            i = step_at(launcher[a.corr].start)
            if i >= 0:
                add("kernel", a.name, i, a.dur)

    # Self CPU: nesting per thread; an event's parent is the innermost event that holds it
    # (same start: the one earlier in the file holds the later).
    cpu = [e for e in evs if e.cat in er.CPU_OP or e.cat in er.RUNTIME]
    by_thread = {}
    for e in cpu:
        by_thread.setdefault(e.thread, []).append(e)
    self_ns = {e.idx: e.dur for e in cpu}
    for tev in by_thread.values():
        tev.sort(key=lambda e: (e.start, -e.end, e.idx))
        stack = []
        for e in tev:
            while stack and not (stack[-1].start <= e.start and e.end <= stack[-1].end):
                stack.pop()
            if stack:
                self_ns[stack[-1].idx] -= e.dur
            stack.append(e)
    for e in cpu:
        i = step_at(e.start)
        if i >= 0:
            add("op", role(e.name), i, self_ns[e.idx])

    # Sync waits by cause: recompute explain_reference's groups, call by call.
    ops = [e for e in evs if e.cat in er.CPU_OP]
    ops_by_thread = {}
    for o in ops:
        ops_by_thread.setdefault(o.thread, []).append(o)
    copy_of = {}
    for a in evs:
        if a.cat in er.MEMCPY and a.corr is not None:
            copy_of.setdefault(a.corr, a)
    syncs = []
    for c in calls:
        if c.dur <= 0:
            continue
        copy = copy_of.get(c.corr)
        strict = er.SYNCHRONIZE_RE.fullmatch(c.name) is not None
        is_memcpy = c.name.startswith(er.MEMCPY_PREFIXES)
        if strict or (is_memcpy and ("Async" not in c.name or (copy is not None and "-> Pageable" in copy.name))):
            label = c.name
            if is_memcpy and copy is not None and "(" in copy.name:
                label += " " + copy.name[copy.name.index("("):]
            syncs.append((c, label))
    encl = er.enclosing_ops(ops_by_thread, [c for c, _ in syncs])
    for c, label in syncs:
        names = [n for n in encl[c.idx] if not er.STEP_RE.fullmatch(n)]
        key = " > ".join(names + [label]) if names else "(no op) > " + label
        i = step_at(c.start)
        if i >= 0:
            add("sync_group", key, i, c.dur)
    return series


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    pa, pb, out = argv[1:]
    ra, rb = er.analyse(pa), er.analyse(pb)
    na, nb = len(ra["steps"]), len(rb["steps"])
    stats = {}
    for metric, get in METRICS:
        a = spread([get(s) for s in ra["steps"]])
        b = spread([get(s) for s in rb["steps"]])
        delta = b["median"] - a["median"]
        noise = na >= 2 and nb >= 2 and abs(delta) < min(a["p75"] - a["p25"], b["p75"] - b["p25"])
        stats[metric] = {"a": a, "b": b, "delta_ns": delta, "noise": noise}
    sa, sb = per_step_series(pa, ra), per_step_series(pb, rb)
    changes = []
    for k in sorted(set(sa) | set(sb)):
        va, vb = sa.get(k, [0] * na), sb.get(k, [0] * nb)
        a, b = sum(va) / na, sum(vb) / nb
        delta = b - a
        if round(delta) == 0:
            continue
        spa, spb = spread(va), spread(vb)
        noise = (k in sa and k in sb and na >= 2 and nb >= 2
                 and abs(delta) < min(spa["p75"] - spa["p25"], spb["p75"] - spb["p25"]))
        changes.append({"kind": k[0], "key": k[1], "a_per_step_ns": a, "b_per_step_ns": b, "delta_per_step_ns": delta,
                        "status": "appeared" if k not in sa else "disappeared" if k not in sb else "changed",
                        "noise": noise})
    changes.sort(key=lambda c: -abs(c["delta_per_step_ns"]))
    pairs = [{"a": s["name"], "b": t["name"],
              "host_delta_ns": (t["host_end_ns"] - t["host_start_ns"]) - (s["host_end_ns"] - s["host_start_ns"]),
              "sync_wait_delta_ns": t["sync_wait_ns"] - s["sync_wait_ns"]}
             for s, t in zip(ra["steps"], rb["steps"])]
    result = {"a": os.path.basename(pa), "b": os.path.basename(pb), "steps_a": na, "steps_b": nb,
              "step_stats": stats, "step_pairs": pairs, "changes_total": len(changes),
              "changes": changes[:40]}
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"{result['a']} vs {result['b']}: {na} / {nb} steps, {len(changes)} changes; top:")
    for c in changes[:10]:
        print(f"  {c['kind']} {c['key'][:80]}: {c['delta_per_step_ns'] / 1e6:+.3f} ms per step")


if __name__ == "__main__":
    main(sys.argv)
