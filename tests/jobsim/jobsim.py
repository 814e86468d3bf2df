#!/usr/bin/env python3
"""Simulated multi-rank PyTorch jobs with their stragglers known by construction: a reviewer's generator,
written apart from tests/jobgen (it shares no code or rule with it or with core/ranks).

The mechanism. Every rank runs the same training loop; the simulation plays all ranks forward together,
one operation at a time, each rank on its own true clock:
  - NCCL: the host thread launches kernels (about 10 us each) and runs ahead of the GPU; a compute kernel
    starts when its launch is done and the compute stream is free. A collective's NCCL kernel runs on its
    process group's one stream: it starts when it was launched, that stream is free and the compute the
    group's stream waits on is done (its arrival); it spins until the last member arrives and ends on every
    member at that last arrival plus the transfer time. The compute stream waits on a collective where the
    model needs its result (FSDP's all-gather, tensor-parallel all-reduce, all_to_all, DDP's end of
    backward). The host blocks only at loss.item() at the end of the step.
  - gloo: compute is host work; a collective is queued on one of the group's two worker threads (the first
    free), starts there when that thread is free, and ends at the last member's start plus the transfer.
    DDP's buckets run while backward goes on; the host waits for them at the end of backward.
  - pipeline stages exchange activations and gradients by send/recv (a pair that ends together).
What goes wrong is only ever a longer duration in one rank's loop (its data loading, a kernel, a host
stall) or a slower transfer; who waited for whom comes out of the play. The truth is the construction:
the injected ranks and the steps where their injected time is at least `late`.

`python3 jobsim.py OUT --seed S [--count N] [--shape P] [--scenario X]` writes jobs (one folder each, a
Kineto trace per rank and TRUTH.json).
"""
import json
import math
import os
import random
import sys

US = 1000
MS = 1000 * US

PARALLELISMS = ["ddp", "fsdp", "tp_dp", "moe", "bcast", "pp", "gloo_ddp"]
SCENARIOS = ["none", "none", "every", "some", "two", "before_some", "loader", "midstep", "slowlink",
             "clock", "stepcount", "missing"]
CLEAN = {"none", "slowlink"}  # no rank is late: a straggler named there is false

KERNELS = {
    "allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "_allgather_base": "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "_reduce_scatter_base": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "broadcast": "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "all_to_all": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
    "send": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
    "recv": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
}
ANNOT = {"allreduce": "all_reduce", "_allgather_base": "_allgather_base", "_reduce_scatter_base": "_reduce_scatter_base",
         "broadcast": "broadcast", "all_to_all": "all_to_all", "send": "send", "recv": "recv"}
GLOO = {"allreduce": ("c10d::allreduce_", "gloo:all_reduce"), "broadcast": ("c10d::broadcast_", "gloo:broadcast")}


class Group:
    def __init__(self, name, ranks, desc="undefined", key=None):
        self.name, self.ranks, self.desc = name, list(ranks), desc
        self.key = key or name  # its NCCL stream (point-to-point pairs get a communicator of their own)
        self.seq = 0


class Rank:
    def __init__(self, r, t0):
        self.r = r
        self.host = t0          # main thread's time
        self.compute = t0       # compute stream free
        self.comm = {}          # group name -> its NCCL stream free
        self.workers = {}       # group name -> [two gloo worker threads' free times]
        self.events = []        # (cat, name, tid, ts, dur, args)
        self.corr = 1000 + 17 * r
        self.open = []          # open regions on the main thread: (name, start)
        self.step = None
        self.speed = 1.0


class Sim:
    def __init__(self, rng, world, nccl, jitter):
        self.rng, self.world, self.nccl, self.jitter = rng, world, nccl, jitter
        t0 = 1_000 * MS
        self.ranks = [Rank(r, t0 + rng.randrange(0, 300 * US)) for r in range(world)]
        for rk in self.ranks:
            rk.speed = 1.0 + rng.gauss(0, 0.002)
        self.extra = {}      # (rank, step index, where) -> added ns
        self.xfer_factor = {}  # (group name, step index) -> transfer times this
        self.step_index = -1

    # -- jitter
    def dur(self, rk, base, sigma=None):
        s = self.jitter if sigma is None else sigma
        d = base * rk.speed * math.exp(self.rng.gauss(0, s))
        if self.rng.random() < 0.002:  # a hiccup now and then
            d += self.rng.expovariate(1.0) * base * s * 3
        return max(int(d), 2 * US)

    def add(self, rk, where):
        return self.extra.get((rk.r, self.step_index, where), 0)

    # -- host side
    def ev(self, rk, cat, name, tid, ts, dur, args=None):
        rk.events.append((cat, name, tid, ts, max(dur, 1), args))

    def step(self, name, idx):
        self.step_index = idx
        for rk in self.ranks:
            if rk.step:
                self.ev(rk, "user_annotation", rk.step[0], "main", rk.step[1], rk.host - rk.step[1])
            rk.step = (name, rk.host)
            rk.host += 3 * US

    def end_steps(self):
        for rk in self.ranks:
            if rk.step:
                self.ev(rk, "user_annotation", rk.step[0], "main", rk.step[1], rk.host - rk.step[1])
                rk.step = None

    def push(self, ranks, name):
        for r in ranks:
            rk = self.ranks[r]
            rk.open.append((name, rk.host))
            rk.host += 1 * US

    def pop(self, ranks):
        for r in ranks:
            rk = self.ranks[r]
            name, start = rk.open.pop()
            self.ev(rk, "user_annotation", name, "main", start, rk.host - start)
            rk.host += 1 * US

    def host_work(self, ranks, base, name=None, where=None, sigma=None):
        for r in ranks:
            rk = self.ranks[r]
            d = self.dur(rk, base, sigma) + (self.add(rk, where) if where else 0)
            if name:
                self.ev(rk, "cpu_op", name, "main", rk.host, d, {"Input Dims": [[256, 256], [256, 256]]})
            rk.host += d

    def kernel(self, ranks, base, name="aten::mm", where=None, tid="main"):
        for r in ranks:
            rk = self.ranks[r]
            if not self.nccl:  # CPU: the op is the work
                d = self.dur(rk, base) + (self.add(rk, where) if where else 0)
                self.ev(rk, "cpu_op", name, tid, rk.host, d, {"Input Dims": [[512, 512], [512, 512]]})
                rk.host += d + 2 * US
                continue
            rk.corr += 1
            launch = int(10 * US * math.exp(self.rng.gauss(0, 0.2)))
            self.ev(rk, "cpu_op", name, tid, rk.host, launch, {"Input Dims": [[4096, 4096], [4096, 4096]],
                                                             "External id": rk.corr})
            self.ev(rk, "cuda_runtime", "cudaLaunchKernel", tid, rk.host + launch - 5 * US, 4 * US,
                    {"correlation": rk.corr, "External id": rk.corr})
            rk.host += launch + 1 * US
            d = self.dur(rk, base) + (self.add(rk, where) if where else 0)
            start = max(rk.host, rk.compute)
            self.ev(rk, "kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, start, d,
                    {"device": rk.r % 8, "stream": 7, "correlation": rk.corr})
            rk.compute = start + d

    def sync(self, ranks):
        """loss.item(): the host waits for every stream."""
        for r in ranks:
            rk = self.ranks[r]
            if not self.nccl:
                continue
            t = max([rk.compute] + list(rk.comm.values()))
            end = max(rk.host + 8 * US, t + 5 * US)
            self.ev(rk, "cpu_op", "aten::item", "main", rk.host, end - rk.host)
            self.ev(rk, "cuda_runtime", "cudaStreamSynchronize", "main", rk.host + 2 * US, end - rk.host - 4 * US)
            rk.host = end + 2 * US

    def wait_comm(self, ranks, group_of):
        """The compute stream (NCCL) or the host (gloo) waits for a group's outstanding collectives."""
        for r in ranks:
            rk = self.ranks[r]
            g = group_of(r)
            if self.nccl:
                rk.compute = max(rk.compute, rk.comm.get(g.key, 0))
                self.ev(rk, "cuda_runtime", "cudaStreamWaitEvent", "main", rk.host, 2 * US)
                rk.host += 3 * US
            else:
                rk.host = max([rk.host] + rk.workers.get(g.name, [0])) + 5 * US

    # -- collectives
    def collective(self, instances, name, nelems, block=False, xfer_ns=None):
        """One collective on every instance (a list of groups, each its member ranks). block: the compute
        stream (NCCL) or the host (gloo) waits for its end."""
        for g in instances:
            g.seq += 1
            factor = self.xfer_factor.get((g.name, self.step_index), 1.0)
            bw = 40.0 if len(g.ranks) <= 8 else 15.0  # bytes per ns
            xfer = xfer_ns if xfer_ns is not None else int(20 * US + 4 * nelems / bw * 2 * (len(g.ranks) - 1) / len(g.ranks))
            if not self.nccl:
                xfer = int(xfer * 8)  # gloo over TCP
            xfer = int(xfer * factor)
            arrivals = {}
            for r in g.ranks:
                rk = self.ranks[r]
                arrivals[r] = self.issue(rk, g, name, nelems)
            last = max(arrivals.values())
            for r in g.ranks:
                rk = self.ranks[r]
                end = last + xfer + self.rng.randrange(0, 3 * US)
                self.finish(rk, g, name, nelems, arrivals[r], end, block)

    def comm_args(self, g, name, nelems):
        a = {"Collective name": name, "Process Group Name": g.name, "Process Group Description": g.desc,
             "Seq": g.seq, "In msg nelems": nelems,
             "Out msg nelems": nelems * (len(g.ranks) if name == "_allgather_base" else 1),
             "Group size": len(g.ranks), "dtype": "Float"}
        return a

    def issue(self, rk, g, name, nelems):
        if self.nccl:
            rk.corr += 1
            d = int(14 * US * math.exp(self.rng.gauss(0, 0.2)))
            self.ev(rk, "cpu_op", "record_param_comms", "main", rk.host, d, self.comm_args(g, name, nelems))
            self.ev(rk, "user_annotation", "nccl:" + ANNOT[name], "main", rk.host + 2 * US, d - 4 * US,
                    {"Input Dims": [[nelems]]})
            self.ev(rk, "cuda_runtime", "cudaLaunchKernel", "main", rk.host + d - 6 * US, 4 * US,
                    {"correlation": rk.corr, "External id": rk.corr})
            rk.host += d + 1 * US
            rk._corr_of = rk.corr
            # ProcessGroupNCCL: the group's stream waits on the current (compute) stream.
            return max(rk.host, rk.comm.get(g.key, 0), rk.compute)
        op, _ = GLOO[name]
        d = int(40 * US * math.exp(self.rng.gauss(0, 0.3)))
        self.ev(rk, "cpu_op", op, "main", rk.host, d, {"Input Dims": [[[nelems]], [], [], [], [], []]})
        queued = rk.host + d // 2
        rk.host += d
        ws = rk.workers.setdefault(g.name, [0, 0])
        k = 0 if ws[0] <= ws[1] else 1
        rk._worker = k
        return max(queued, ws[k] + 10 * US)

    def finish(self, rk, g, name, nelems, arrival, end, block):
        if self.nccl:
            args = dict(self.comm_args(g, name, nelems))
            args.update({"device": rk.r % 8, "stream": 20 + sum(map(ord, g.key)) % 50, "correlation": rk._corr_of})
            self.ev(rk, "kernel", KERNELS[name], 20 + sum(map(ord, g.key)) % 50, arrival, end - arrival, args)
            rk.comm[g.key] = end
            if block:
                rk.compute = max(rk.compute, end)
            return
        k = rk._worker
        _, span = GLOO[name]
        self.ev(rk, "user_annotation", span, "gloo%d_%d" % (int(g.name), k), arrival, end - arrival,
                {"Input Dims": [[nelems]]})
        rk.workers[g.name][k] = end
        if block:
            rk.host = max(rk.host, end) + 5 * US

    def p2p(self, src, dst, g, nelems):
        """A send from src and its recv on dst (NCCL point-to-point; the receiver's compute waits on it)."""
        g.seq += 1
        a = {}
        for r, nm in ((src, "send"), (dst, "recv")):
            a[r] = self.issue(self.ranks[r], g, nm, nelems)
        last = max(a.values())
        xfer = int(15 * US + nelems * 2 / 40.0)
        for r, nm in ((src, "send"), (dst, "recv")):
            self.finish(self.ranks[r], g, nm, nelems, a[r], last + xfer, block=(r == dst))


# ---------------------------------------------------------------------------------------------------------
# The training loops. Each plays one step on every rank; `where` names the places an injection lengthens.

def loop_ddp(sim, j, idx, pre=None):
    ranks = range(j["world"])
    world = j["groups"][0]
    sim.push(ranks, "data_loading")
    sim.host_work(ranks, j["loader"], "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                  where="loader", sigma=j["loader_sigma"])
    sim.pop(ranks)
    if pre:
        pre()
    sim.push(ranks, "forward")
    for l in range(j["layers"]):
        sim.kernel(ranks, j["fwd"], where="fwd%d" % l)
    sim.pop(ranks)
    sim.push(ranks, "backward")
    # A bucket is reduced as soon as its last gradient is ready, while backward goes on.
    ready = {round(j["layers"] * (b + 1) / j["buckets"]) for b in range(j["buckets"])}
    for n, l in enumerate(reversed(range(j["layers"]))):
        sim.kernel(ranks, 2 * j["fwd"], name="autograd::engine::evaluate_function: MmBackward0", where="bwd%d" % l)
        if n + 1 in ready:
            sim.collective([world], "allreduce", j["bucket_elems"])
    sim.wait_comm(ranks, lambda r: world)
    sim.pop(ranks)
    sim.push(ranks, "optimizer")
    sim.kernel(ranks, j["fwd"] // 2, name="aten::_foreach_add_")
    sim.pop(ranks)
    sim.sync(ranks)


def loop_bcast(sim, j, idx):
    world = j["groups"][0]
    loop_ddp(sim, j, idx, pre=lambda: sim.collective([world], "broadcast", 4096, block=True))


def loop_fsdp(sim, j, idx):
    ranks = range(j["world"])
    world = j["groups"][0]
    sim.push(ranks, "data_loading")
    sim.host_work(ranks, j["loader"], "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                  where="loader", sigma=j["loader_sigma"])
    sim.pop(ranks)
    sim.push(ranks, "forward")
    for l in range(j["layers"]):
        sim.collective([world], "_allgather_base", j["bucket_elems"] // 4, block=True)
        sim.kernel(ranks, j["fwd"], where="fwd%d" % l)
    sim.pop(ranks)
    sim.push(ranks, "backward")
    for l in reversed(range(j["layers"])):
        sim.collective([world], "_allgather_base", j["bucket_elems"] // 4, block=True)
        sim.kernel(ranks, 2 * j["fwd"], name="autograd::engine::evaluate_function: MmBackward0", where="bwd%d" % l)
        sim.collective([world], "_reduce_scatter_base", j["bucket_elems"])
    sim.wait_comm(ranks, lambda r: world)
    sim.pop(ranks)
    sim.push(ranks, "optimizer")
    sim.kernel(ranks, j["fwd"] // 2, name="aten::_foreach_add_")
    sim.pop(ranks)
    sim.sync(ranks)


def loop_tp_dp(sim, j, idx):
    ranks = range(j["world"])
    tp, dp = j["tp_groups"], j["dp_groups"]
    dp_of = {r: g for g in dp for r in g.ranks}
    sim.push(ranks, "data_loading")
    sim.host_work(ranks, j["loader"], "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                  where="loader", sigma=j["loader_sigma"])
    sim.pop(ranks)
    sim.push(ranks, "forward")
    for l in range(j["layers"]):
        sim.kernel(ranks, j["fwd"], where="fwd%d" % l)
        sim.collective(tp, "allreduce", j["act_elems"], block=True)
    sim.pop(ranks)
    sim.push(ranks, "backward")
    for l in reversed(range(j["layers"])):
        sim.kernel(ranks, 2 * j["fwd"], name="autograd::engine::evaluate_function: MmBackward0", where="bwd%d" % l)
        sim.collective(tp, "allreduce", j["act_elems"], block=True)
        sim.collective(dp, "allreduce", j["bucket_elems"])
    sim.wait_comm(ranks, lambda r: dp_of[r])
    sim.pop(ranks)
    sim.push(ranks, "optimizer")
    sim.kernel(ranks, j["fwd"] // 2, name="aten::_foreach_add_")
    sim.pop(ranks)
    sim.sync(ranks)


def loop_moe(sim, j, idx):
    ranks = range(j["world"])
    world = j["groups"][0]
    sim.push(ranks, "data_loading")
    sim.host_work(ranks, j["loader"], "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                  where="loader", sigma=j["loader_sigma"])
    sim.pop(ranks)
    sim.push(ranks, "forward")
    for l in range(j["layers"]):
        sim.kernel(ranks, j["fwd"], where="fwd%d" % l)
        sim.collective([world], "all_to_all", j["act_elems"], block=True)
        sim.kernel(ranks, j["fwd"] // 2, name="aten::bmm")
        sim.collective([world], "all_to_all", j["act_elems"], block=True)
    sim.pop(ranks)
    sim.push(ranks, "backward")
    for l in reversed(range(j["layers"])):
        sim.collective([world], "all_to_all", j["act_elems"], block=True)
        sim.kernel(ranks, j["fwd"], name="autograd::engine::evaluate_function: BmmBackward0", where="bwd%d" % l)
        sim.collective([world], "all_to_all", j["act_elems"], block=True)
    sim.collective([world], "allreduce", j["bucket_elems"])
    sim.wait_comm(ranks, lambda r: world)
    sim.pop(ranks)
    sim.push(ranks, "optimizer")
    sim.kernel(ranks, j["fwd"] // 2, name="aten::_foreach_add_")
    sim.pop(ranks)
    sim.sync(ranks)


def loop_pp(sim, j, idx):
    P, D, M = j["stages"], j["world"] // j["stages"], j["micro"]
    ranks = range(j["world"])
    stage = lambda s: [d * P + s for d in range(D)]
    pairs = j["pp_pairs"]
    sim.push(ranks, "data_loading")
    # Every rank iterates the same loader (the first stage uses the inputs, the last the labels).
    sim.host_work(ranks, j["loader"], "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                  where="loader", sigma=j["loader_sigma"])
    sim.pop(ranks)
    sim.push(ranks, "forward")
    for m in range(M):
        for s in range(P):
            sim.kernel(stage(s), j["fwd"], where="fwd%d" % m)
            if s < P - 1:
                for d in range(D):
                    sim.p2p(d * P + s, d * P + s + 1, pairs[(d * P + s, d * P + s + 1)], j["act_elems"])
    sim.pop(ranks)
    sim.push(ranks, "backward")
    for m in range(M):
        for s in reversed(range(P)):
            sim.kernel(stage(s), 2 * j["fwd"], name="autograd::engine::evaluate_function: MmBackward0",
                       where="bwd%d" % m)
            if s > 0:
                for d in range(D):
                    sim.p2p(d * P + s, d * P + s - 1, pairs[(d * P + s - 1, d * P + s)], j["act_elems"])
    if D > 1:
        sim.collective(j["dp_groups"], "allreduce", j["bucket_elems"])
        dp_of = {r: g for g in j["dp_groups"] for r in g.ranks}
        sim.wait_comm(ranks, lambda r: dp_of[r])
    sim.pop(ranks)
    sim.collective([j["groups"][0]], "allreduce", 1, block=True)  # the global grad norm
    sim.push(ranks, "optimizer")
    sim.kernel(ranks, j["fwd"] // 2, name="aten::_foreach_add_")
    sim.pop(ranks)
    sim.sync(ranks)


LOOPS = {"ddp": loop_ddp, "fsdp": loop_fsdp, "tp_dp": loop_tp_dp, "moe": loop_moe, "bcast": loop_bcast,
         "pp": loop_pp, "gloo_ddp": loop_ddp}


# ---------------------------------------------------------------------------------------------------------
# A job: its shape drawn, its injections, the play, the files.

def draw(seed, shape=None, scenario=None):
    rng = random.Random(seed * 7919 + 101)
    p = shape or rng.choice(PARALLELISMS)
    x = scenario or rng.choice(SCENARIOS)
    nccl = p != "gloo_ddp"
    sizes = [2, 4, 8, 16, 32, 64] if nccl else [2, 3, 4, 8, 16]
    weights = [3, 3, 3, 2, 1, 1] if nccl else [2, 1, 3, 2, 1]
    world = rng.choices(sizes, weights)[0]
    if p == "tp_dp" and world < 4:
        world = 4
    j = {"seed": seed, "shape": p, "scenario": x, "nccl": nccl, "world": world,
         "steps": rng.randint(5, 8), "first": rng.randint(1, 20),
         "per_host": 8 if world > 8 and rng.random() < 0.7 else 4,
         "jitter": math.exp(rng.uniform(math.log(0.005), math.log(0.04))) if nccl
         else math.exp(rng.uniform(math.log(0.02), math.log(0.10))),
         "loader": int(math.exp(rng.uniform(math.log(300 * US), math.log(3 * MS)))),
         "loader_sigma": rng.uniform(0.03, 0.15),
         "fwd": int(math.exp(rng.uniform(math.log(200 * US), math.log(2 * MS)))) * (1 if nccl else 2),
         "bucket_elems": int(2 ** rng.uniform(16, 25)), "act_elems": int(2 ** rng.uniform(14, 22)),
         "late": int(math.exp(rng.uniform(math.log(2 * MS), math.log(40 * MS)))),
         "file_names": rng.choice(["rank", "rank", "torch"])}
    # Layers and buckets give 1-16 collectives a step.
    if p in ("ddp", "gloo_ddp", "bcast"):
        j["layers"] = rng.randint(2, 8)
        j["buckets"] = rng.randint(1, min(j["layers"], 8 if p != "bcast" else 7))
    elif p == "fsdp":
        j["layers"] = rng.randint(1, 5)
    elif p == "tp_dp":
        j["layers"] = rng.randint(1, 4)
    elif p == "moe":
        j["layers"] = rng.randint(1, 3)
    else:
        j["layers"] = 1
        j["stages"] = rng.choice([s for s in (2, 4) if world % s == 0 and s <= world] or [2])
        j["micro"] = rng.randint(2, 4)
    # Process groups, created (and so named) in the same order on every rank.
    groups = [Group("0", range(world), "default_pg")]
    if p == "tp_dp":
        t = rng.choice([s for s in (2, 4, 8) if s < world and world % s == 0])
        j["tp"] = t
        j["tp_groups"] = [Group(str(len(groups) + k), range(k * t, (k + 1) * t)) for k in range(world // t)]
        groups += j["tp_groups"]
        j["dp_groups"] = [Group(str(len(groups) + i), range(i, world, t)) for i in range(t)]
        groups += j["dp_groups"]
    if p == "pp":
        P, D = j["stages"], world // j["stages"]
        j["dp_groups"] = [Group(str(len(groups) + s), [d * P + s for d in range(D)]) for s in range(P)] if D > 1 else []
        groups += j["dp_groups"]
        j["pp_pairs"] = {(d * P + s, d * P + s + 1): Group("0", [d * P + s, d * P + s + 1], "default_pg",
                                                          key="p2p%d_%d" % (d * P + s, d * P + s + 1))
                         for d in range(D) for s in range(P - 1)}
    j["groups"] = groups
    return j, rng


def inject(j, rng):
    """The injections: {(rank, step index, where): ns} and the truth they make."""
    steps, world, late = j["steps"], j["world"], j["late"]
    x = j["scenario"]
    extra, truth, slow = {}, [], {}
    late_places = ["loader", "fwd0"]
    if j["shape"] == "pp":
        late_places = ["fwd%d" % rng.randrange(j["micro"])]
    def one(rank, idxs, where, amount):
        for i in idxs:
            extra[(rank, i, where)] = amount
        return {"ranks": [rank], "steps": sorted(idxs), "where": where, "late_ns": amount}
    def some_steps(k_max):
        k = rng.randint(1, max(1, k_max))
        return rng.sample(range(steps), k)
    if x in ("every", "clock") or (x in ("stepcount", "missing") and rng.random() < 0.3):
        r = rng.randrange(world)
        truth.append(one(r, range(steps), rng.choice(late_places), late))
    elif x in ("some", "stepcount", "missing"):
        truth.append(one(rng.randrange(world), some_steps(steps // 2), rng.choice(late_places), late))
    elif x == "two":
        a, b = rng.sample(range(world), 2)
        idx = rng.sample(range(steps), rng.randint(2, min(4, steps)))
        half = rng.randint(1, len(idx) - 1)
        truth.append(one(a, idx[:half], rng.choice(late_places), late))
        truth.append(one(b, idx[half:], rng.choice(late_places),
                         int(late * math.exp(rng.uniform(-0.5, 0.5)))))
    elif x == "loader":
        truth.append(one(rng.randrange(world), some_steps(steps - 1), "loader", late))
    elif x == "midstep":
        where = "fwd%d" % rng.randrange(j["layers"] if j["shape"] != "pp" else j["micro"])
        truth.append(one(rng.randrange(world), some_steps(steps - 1), where, late))
    elif x == "before_some":
        # Late in backward after its first gradients went out: on time at the step's first collectives.
        L = j["layers"] if j["shape"] != "pp" else j["micro"]
        where = "bwd%d" % rng.randrange(0, max(1, L - 1)) if j["shape"] != "pp" else "bwd%d" % (L - 1)
        truth.append(one(rng.randrange(world), some_steps(steps - 1), where, late))
    elif x == "slowlink":
        # One rank's link is slow: the world's ring runs slower for everyone; nobody arrives late.
        for i in range(steps):
            if rng.random() < 0.6:
                slow[("0", i)] = rng.uniform(3, 10)
    return extra, truth, slow


def generate(seed, shape=None, scenario=None):
    j, rng = draw(seed, shape, scenario)
    extra, truth, slow = inject(j, rng)
    sim = Sim(rng, j["world"], j["nccl"], j["jitter"])
    sim.extra, sim.xfer_factor = extra, slow
    names = ["ProfilerStep#%d" % (j["first"] + i) for i in range(j["steps"])]
    # An untraced step first (the profiler's wait and warm-up): the ranks are in step when tracing starts.
    sim.step("warmup", -1)
    LOOPS[j["shape"]](sim, j, -1)
    for rk in sim.ranks:
        rk.events, rk.step = [], None
    for i, name in enumerate(names):
        sim.step(name, i)
        LOOPS[j["shape"]](sim, j, i)
    sim.end_steps()
    for t in truth:
        t["steps"] = [names[i] for i in t["steps"]]
    # Hosts and their clocks (ranks of one host share one).
    base = rng.randrange(10, 80)
    hosts = ["node%02d" % (base + r // j["per_host"]) for r in range(j["world"])]
    offsets = {}
    for h in sorted(set(hosts)):
        offsets[h] = int(rng.uniform(-2.5, 2.5) * 1e9) if j["scenario"] == "clock" else int(rng.gauss(0, 80 * US))
    files = {r: sim.ranks[r].events for r in range(j["world"])}
    faults = {}
    if j["scenario"] == "stepcount":
        # One rank's profiler started a step later, or stopped a step earlier, than the others'.
        bystanders = [r for r in range(j["world"]) if all(r not in t["ranks"] for t in truth)]
        r = rng.choice(bystanders)
        cut = names[0] if rng.random() < 0.5 else names[-1]
        lo, hi = step_window(files[r], cut)
        files[r] = [e for e in files[r] if not lo <= e[3] < hi]
        faults["fewer_steps"] = {"rank": r, "step": cut}
    if j["scenario"] == "missing" and j["world"] > 2:
        bystanders = [r for r in range(j["world"]) if all(r not in t["ranks"] for t in truth)]
        r = rng.choice(bystanders)
        del files[r]
        faults["missing_rank"] = r
    job = {"seed": seed, "shape": j["shape"], "scenario": j["scenario"], "backend": "nccl" if j["nccl"] else "gloo",
           "world": j["world"], "steps": names, "jitter": j["jitter"], "late_ns": j["late"],
           "collectives_per_step": count_collectives(sim, names[0]),
           "stragglers": truth, "stages": j.get("stages"), "hosts": hosts, "clock_ns": [offsets[h] for h in hosts], "faults": faults}
    return job, {r: render(j, r, ev, hosts[r], offsets[hosts[r]]) for r, ev in files.items()}


def step_window(events, name):
    for e in events:
        if e[1] == name:
            return e[3], e[3] + e[4]
    return 0, 0


def count_collectives(sim, step):
    lo, hi = step_window(sim.ranks[0].events, step)
    return sum(1 for e in sim.ranks[0].events
               if lo <= e[3] < hi and (e[1] == "record_param_comms" or e[1].startswith("c10d::"))
               and not (isinstance(e[5], dict) and e[5].get("Collective name") in ("send", "recv")))


def render(j, r, events, host, offset):
    pid = 4000 + 131 * r
    tids = {"main": pid}
    out = [{"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python3"}},
           {"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": pid, "args": {"name": "thread %d (python3)" % pid}}]
    for cat, name, tid, ts, dur, args in sorted(events, key=lambda e: e[3]):
        if isinstance(tid, str) and tid not in tids:
            tids[tid] = pid + 1 + len(tids)
            out.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tids[tid],
                        "args": {"name": "thread %d (pt_gloo_runloop)" % tids[tid]}})
        e = {"ph": "X", "cat": cat, "name": name, "pid": r % 8 if cat == "kernel" else pid,
             "tid": tid if cat == "kernel" else tids[tid],
             "ts": round((ts + offset) / 1000.0, 3), "dur": round(dur / 1000.0, 3)}
        if args:
            e["args"] = args
        out.append(e)
    pgs = [{"pg_name": g.name, "pg_desc": g.desc, "backend_config": "cuda:nccl" if j["nccl"] else "cpu:gloo,cuda:gloo",
            "pg_size": len(g.ranks), "ranks": g.ranks} for g in j["groups"] if r in g.ranks]
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": r % 8, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
                                 "numSms": 132}] if j["nccl"] else [],
           "distributedInfo": {"backend": "nccl" if j["nccl"] else "gloo", "rank": r, "world_size": j["world"],
                               "pg_count": len(pgs), "pg_config": pgs},
           "record_shapes": 1, "displayTimeUnit": "ms", "traceEvents": out}
    name = ("rank-%d.pt.trace.json" % r if j["file_names"] == "rank"
            else "%s_%d.%d.pt.trace.json" % (host, pid, 1764990000000 + r))
    return name, doc


def write(job, files, folder):
    os.makedirs(folder, exist_ok=True)
    for r, (name, doc) in files.items():
        with open(os.path.join(folder, name), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    with open(os.path.join(folder, "TRUTH.json"), "w") as f:
        json.dump(job, f, indent=1)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--shape", choices=PARALLELISMS)
    ap.add_argument("--scenario", choices=sorted(set(SCENARIOS)))
    a = ap.parse_args(argv)
    for k in range(a.count):
        job, files = generate(a.seed + k, a.shape, a.scenario)
        write(job, files, os.path.join(a.out, "job-%d" % (a.seed + k)))
        print(os.path.join(a.out, "job-%d" % (a.seed + k)), job["shape"], job["scenario"], job["world"])


if __name__ == "__main__":
    main(sys.argv[1:])
