#!/usr/bin/env python3
"""Writes a generated distributed job: one Kineto trace per rank (rank-R.pt.trace.json.gz) with
distributedInfo (nccl, rank, world size, one process group), ProfilerStep#1..#S windows, per step a
data_loading and a forward region of cpu_ops launching compute kernels (cudaLaunchKernel + kernel by
correlation), then an NCCL all-reduce kernel (--collectives per step) that carries Collective name, Process Group Name, Seq and
Comms Id (the same id on every rank). All ranks share one clock. One rank is a straggler: its
data_loading takes STRAGGLE_MS longer in steps 3 and 5, so every other rank's all-reduce of those steps
starts at its own arrival and ends with the straggler's (the others wait).

usage: make_ranks_job.py OUT_DIR [--ranks 64] [--steps 8] [--kernels 400] [--straggler 5] [--straggle-ms 40]
"""
import argparse
import gzip
import json
import os
import random


def rank_trace(rank, a):
    rnd = random.Random(rank)
    ev = []
    corr = 0
    t = 1_000_000.0  # us
    pg = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": a.ranks,
           "ranks": list(range(a.ranks))}]
    seq = 0
    # The common schedule: every rank computes the same amount; the straggler loads data longer.
    for s in range(1, a.steps + 1):
        step_start = 1_000_000.0 + (s - 1) * a.step_us
        late = a.straggle_ms * 1000 if (rank == a.straggler and s in (3, 5)) else 0.0
        straggle_any = a.straggle_ms * 1000 if s in (3, 5) else 0.0
        load = 2000.0 + late + rnd.uniform(0, 50)
        ev.append({"ph": "X", "cat": "user_annotation", "name": "data_loading", "pid": 1, "tid": 1,
                   "ts": step_start + 10, "dur": load})
        t = step_start + 20 + load
        fwd_start = t
        gpu = t + 30
        for k in range(a.kernels):
            corr += 1
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t, "dur": 8,
                       "args": {"Input Dims": [[512, 512], [512, 512]], "External id": corr}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t + 2, "dur": 4, "args": {"correlation": corr}})
            gpu = max(gpu, t + 6)
            d = 9.0 + rnd.uniform(0, 2)
            ev.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n", "pid": 0,
                       "tid": 7, "ts": gpu, "dur": d, "args": {"device": 0, "stream": 7, "correlation": corr}})
            gpu += d
            t += 10
        ev.append({"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 1, "ts": fwd_start,
                   "dur": t - fwd_start})
        # All-reduces: every rank arrives after its own work; all end together after the last arrival.
        last = step_start + 20 + 2000 + straggle_any + 50 + 10 * a.kernels + 40
        for i in range(a.collectives):
            seq += 1
            corr += 1
            arrive = max(gpu, t + 6)
            ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": t,
                       "dur": 8, "args": {"Collective name": "allreduce", "Seq": seq, "Process Group Name": "0"}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t + 2, "dur": 4, "args": {"correlation": corr}})
            end = max(arrive, last) + 300
            ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                       "pid": 0, "tid": 20, "ts": arrive, "dur": end - arrive,
                       "args": {"device": 0, "stream": 20, "correlation": corr, "Collective name": "allreduce",
                                "Process Group Name": "0", "Seq": seq, "Comms Id": f"job-{s}-{i}",
                                "In msg nelems": 1 << 20, "dtype": "Float"}})
            gpu = end
            last = end
            t += 10
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "pid": 1, "tid": 1,
                   "ts": step_start, "dur": max(gpu, t) - step_start + 20})
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": a.ranks,
                                                     "pg_count": 1, "pg_config": pg},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": ev}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--kernels", type=int, default=400)
    ap.add_argument("--collectives", type=int, default=1)
    ap.add_argument("--straggler", type=int, default=5)
    ap.add_argument("--straggle-ms", type=float, default=40)
    a = ap.parse_args()
    a.step_us = 2000 + a.straggle_ms * 1000 + 10 * a.kernels + 40 * (a.collectives + 1) * 10 + 5000
    os.makedirs(a.out, exist_ok=True)
    for r in range(a.ranks):
        with gzip.open(os.path.join(a.out, f"rank-{r}.pt.trace.json.gz"), "wt", compresslevel=1) as f:
            json.dump(rank_trace(r, a), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
