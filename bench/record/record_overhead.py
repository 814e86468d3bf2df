#!/usr/bin/env python3
"""What `attnscope-cli record` adds beyond torch.profiler's own cost, side by side in one run.

The same training loop (tests/data/scripts/train_mlp.py) is profiled, in alternating rounds, (a) by
torch.profiler written into the script by hand (train_mlp_profiled.py), (b) by `attnscope-cli record`
on the unmodified script (--wrap-modules none), and (c) by record with --wrap-modules children (its
module hooks' cost, for reference). Each round gives the active steps' times (the wall clock between
two step boundaries); the medians of each round are then summarised as median [p10-p90] over the
rounds, and the ratio b/a (and c/a) is printed.

usage: bench/record/record_overhead.py [--cli build-release/bin/attnscope-cli] [--rounds 7] [--active 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "tests", "data", "scripts")


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def spread(v):
    return "%.1f us [%.1f-%.1f]" % (statistics.median(v) / 1e3, pct(v, 0.1) / 1e3, pct(v, 0.9) / 1e3)


def hand(active):
    r = subprocess.run([sys.executable, os.path.join(HERE, "train_mlp_profiled.py"), SCRIPTS, str(active)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def record(cli, active, wrap, tmp):
    out = os.path.join(tmp, "rec.json")
    subprocess.run([cli, "record", "--active", str(active), "--baseline", "0", "--wrap-modules", wrap, "--out", out,
                    "--", sys.executable, os.path.join(SCRIPTS, "train_mlp.py"), "--steps", str(active + 10)],
                   capture_output=True, text=True, check=True)
    with open(out) as f:
        head = f.read(1 << 16)
    i = head.find('"profiled_ns": [')
    return json.loads(head[i + 15:head.find("]", i) + 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build-release", "bin", "attnscope-cli"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--active", type=int, default=20)
    a = ap.parse_args()
    rows = {"hand-written torch.profiler": [], "attnscope-cli record": [], "record --wrap-modules children": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            rows["hand-written torch.profiler"].append(statistics.median(hand(a.active)))
            rows["attnscope-cli record"].append(statistics.median(record(a.cli, a.active, "none", tmp)))
            rows["record --wrap-modules children"].append(
                statistics.median(record(a.cli, a.active, "children", tmp)))
    base = statistics.median(rows["hand-written torch.profiler"])
    print("train_mlp.py, %d rounds of %d profiled steps each (CPU, python %s):" % (
        a.rounds, a.active, sys.version.split()[0]))
    print("  %-32s %-28s %s" % ("profiled by", "step time: median [p10-p90]", "ratio to hand-written"))
    for k, v in rows.items():
        print("  %-32s %-28s %.3f" % (k, spread(v), statistics.median(v) / base))


if __name__ == "__main__":
    main()
