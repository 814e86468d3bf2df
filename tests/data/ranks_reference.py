#!/usr/bin/env python3
"""Expected values for tests/core/test_ranks.cpp, from the raw events of the shared multi-rank sets
(json and gzip only; nothing of attnscope). Prints one JSON object:
  {set: {"ranks": {rank: {"collectives": N}},
         "end_offset_us": {rank: median over matched collectives of (end - rank 0's end)},
         "max_end_spread_us": largest spread of one collective's ends across ranks,
         "side": {rank: number of scalar (Input Dims [[]]) all-reduces}  (gloo_hang_missing)}}
A rank's collectives: gloo traces: its c10d::allreduce_ ops; NCCL traces: its nccl kernels. Matched
across ranks by their order among the collectives of the same size (gloo: Input Dims of the worker's
gloo:all_reduce; NCCL: the k-th kernel); collectives the profiler cut ("finished": false) are skipped.
usage: ranks_reference.py MULTIRANK_DIR"""
import glob, gzip, json, os, re, statistics, sys


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def rank_of(doc, path):
    r = (doc.get("distributedInfo") or {}).get("rank")
    if r is not None:
        return int(r)
    return int(re.search(r"(?:rank|worker)[-_]?(\d+)", os.path.basename(path)).group(1))


def summarize(doc):
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    nccl = sorted((e for e in ev if e.get("cat") == "kernel" and "nccl" in e["name"].lower()), key=lambda e: e["ts"])
    if nccl:
        return len(nccl), {"nccl": [(e["ts"] + e["dur"], True) for e in nccl]}, 0
    ops = [e for e in ev if e["name"] == "c10d::allreduce_"]
    streams = {}
    for e in sorted((e for e in ev if e["name"] == "gloo:all_reduce"), key=lambda e: e["ts"]):
        args = e.get("args", {})
        key = json.dumps(args.get("Input Dims"))
        streams.setdefault(key, []).append((e["ts"] + e["dur"], args.get("finished", True) is not False and "Input Dims" in args))
    side = len(streams.get(json.dumps([[]]), []))
    return len(ops), streams, side


def main():
    out = {}
    for d in sorted(glob.glob(os.path.join(sys.argv[1], "*"))):
        files = sorted(glob.glob(os.path.join(d, "*trace.json*")))
        if not files:
            continue
        per = {}
        for f in files:
            doc = load(f)
            per[rank_of(doc, f)] = summarize(doc)
        ranks = sorted(per)
        diffs = {r: [] for r in ranks}
        spread = 0.0
        for key in per[ranks[0]][1]:
            n = min(len(per[r][1].get(key, [])) for r in ranks)
            for k in range(n):
                ends = {r: per[r][1][key][k] for r in ranks}
                if not all(ok for _, ok in ends.values()):
                    continue
                spread = max(spread, max(t for t, _ in ends.values()) - min(t for t, _ in ends.values()))
                for r in ranks:
                    diffs[r].append(ends[r][0] - ends[ranks[0]][0])
        out[os.path.basename(d)] = {
            "ranks": {str(r): {"collectives": per[r][0]} for r in ranks},
            "end_offset_us": {str(r): statistics.median(diffs[r]) if diffs[r] else None for r in ranks},
            "max_end_spread_us": spread,
            "side": {str(r): per[r][2] for r in ranks},
        }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
