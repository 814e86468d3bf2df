#!/usr/bin/env python3
"""Writes the hand-made multi-rank traces of tests/core/test_ranks.cpp (expected values by hand there).
   python3 tests/data/ranks/make.py   (from the repository root; rewrites the folders below)"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))


def dist(rank, world, pgs=None):
    d = {"backend": "gloo", "rank": rank, "world_size": world}
    if pgs is not None:
        d["pg_count"] = len(pgs)
        d["pg_config"] = pgs
    return d


def step(ts, dur, n=1, tid=1):
    return {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def gloo(ts, dur, size, worker_ts, worker_dur, tid=11):
    return [
        {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": ts, "dur": dur,
         "args": {"Input Dims": [[[size]], [], [], [], [], []]}},
        {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 1, "tid": tid, "ts": worker_ts,
         "dur": worker_dur, "args": {"Input Dims": [[size]]}},
    ]


def write(folder, name, events, distributed=None):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    doc = {"schemaVersion": 1, "traceEvents": events}
    if distributed is not None:
        doc["distributedInfo"] = distributed
    with open(os.path.join(HERE, folder, name), "w") as f:
        json.dump(doc, f, indent=0)


PG2 = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo", "pg_size": 2, "ranks": [0, 1]}]

# mismatch: rank 1 issues a different size as its 2nd collective.
for rank, sizes in ((0, (10, 20, 30)), (1, (10, 99, 30))):
    ev = [step(0, 1000)]
    for k, s in enumerate(sizes):
        t = 100 + 300 * k
        ev += gloo(t, 10, s, t + 20, 100)
    write("mismatch", f"rank-{rank}.trace.json", ev, dist(rank, 2, PG2))

# duplicate: two files claim rank 0.
for name, rank in (("a-rank-0.trace.json", 0), ("b-rank-0.trace.json", 0), ("rank-1.trace.json", 1)):
    write("duplicate", name, [step(0, 500)] + gloo(100, 10, 10, 120, 100), dist(rank, 2, PG2))

# missing: world size 3, ranks 0 and 2 only; the rank of the second file comes from its name.
PG3 = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo", "pg_size": 3, "ranks": [0, 1, 2]}]
write("missing", "rank-0.trace.json", [step(0, 500)] + gloo(100, 10, 10, 120, 100), dist(0, 3, PG3))
write("missing", "worker2.trace.json", [step(0, 500)] + gloo(100, 10, 10, 120, 100))

# mixed: world sizes 2 and 4.
write("mixed", "rank-0.trace.json", [step(0, 500)] + gloo(100, 10, 10, 120, 100), dist(0, 2))
write("mixed", "rank-1.trace.json", [step(0, 500)] + gloo(100, 10, 10, 120, 100), dist(1, 4))


# nccl: kernels carrying the collective's args (Comms Id); rank 1's clock is 500 us ahead.
def kernel(ts, dur, seq, comms_id, corr):
    return {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", "pid": 0,
            "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr, "Collective name": "allreduce",
                     "Process Group Name": "0", "Seq": seq, "Comms Id": comms_id, "In msg nelems": 1024,
                     "dtype": "Float"}}


# rank 0: kernels [100,150] [200,260] [300,320] and a 4th [400,430] rank 1 never issues.
# rank 1 (clock +500 us): [580,650] [690,760] [790,820]; its step runs to 950 (450 on rank 0's clock).
r0 = [step(50, 400), kernel(100, 50, 1, "c1", 1), kernel(200, 60, 2, "c2", 2), kernel(300, 20, 3, "c3", 3),
      kernel(400, 30, 4, "c4", 4)]
r1 = [step(550, 400), kernel(580, 70, 1, "c1", 1), kernel(690, 70, 2, "c2", 2), kernel(790, 30, 3, "c3", 3)]
write("nccl", "rank-0.trace.json", r0, {"backend": "nccl", "rank": 0, "world_size": 2})
write("nccl", "rank-1.trace.json", r1, {"backend": "nccl", "rank": 1, "world_size": 2})
