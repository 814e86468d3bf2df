#!/usr/bin/env python3
"""What a capture costs the job it captures (issue 43): step times before, during and right after an
`attnscope-cli capture` of a running training loop, side by side in one run, and what the job pays
for being ready at all (KINETO_USE_DAEMON=1: Kineto's poller thread) against the same loop without it.

The loop is tests/data/capture/train_loop.py (an MLP trained with SGD, no profiler code) with its own
step log (wall clock around each step, taken by the script, not by a profiler). The captured steps are
found in the job's log by the trace's Optimizer.step# spans (host clock, Unix ns).

  python3 bench/capture_cost.py [--cli build-release/bin/attnscope-cli] [--iterations 20]
                                [--seconds 8] [--hidden 1024] [--batch 256] [--out DIR]
  python3 bench/capture_cost.py --reanalyze DIR     # the figures again from a run's --out folder

The last line is key=value pairs: medians (ms) with p10/p90, and the ratios during/before,
after/before (the capture's cost) and ready/plain (the variable's cost while nobody captures).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "..", "tests", "data", "capture", "train_loop.py")


def steps_of(log):
    out = []
    with open(log) as f:
        for line in f:
            w = line.split()
            if len(w) == 4:
                out.append((int(w[0]), int(w[1]), int(w[2]), int(w[3])))
    return out


def spread(ms):
    if not ms:
        return (float("nan"),) * 3
    q = statistics.quantiles(ms, n=10) if len(ms) > 1 else [ms[0]] * 9
    return statistics.median(ms), q[0], q[-1]


def start_loop(args, log, ready):
    env = dict(os.environ)
    env.pop("KINETO_USE_DAEMON", None)
    env["OMP_NUM_THREADS"] = "1"  # one compute thread: a shared machine's other load spreads it less
    if ready:
        env["KINETO_USE_DAEMON"] = "1"
        env.setdefault("KINETO_LOG_LEVEL", "5")
    cmd = [sys.executable, LOOP, "--sleep", "0", "--hidden", str(args.hidden), "--batch", str(args.batch),
           "--device", args.device, "--log", log]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_steps(log, n, timeout=180):
    t = time.time()
    while time.time() - t < timeout:
        if os.path.exists(log) and len(steps_of(log)) >= n:
            return True
        time.sleep(0.2)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build-release", "bin", "attnscope-cli"))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--out", default="")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reanalyze", default="", metavar="DIR",
                    help="the figures again from an earlier run's --out folder (capture.json, ready.steps, plain.steps)")
    args = ap.parse_args()
    if args.reanalyze:
        d = args.reanalyze
        return report(args, os.path.join(d, "capture.json"), os.path.join(d, "ready.steps"),
                      steps_of(os.path.join(d, "plain.steps"))[20:], float("nan"))
    out = args.out or tempfile.mkdtemp(prefix="attnscope-capture-cost-")
    os.makedirs(out, exist_ok=True)

    # The control: the same loop without the variable, for the same time.
    plain_log = os.path.join(out, "plain.steps")
    plain = start_loop(args, plain_log, ready=False)
    wait_steps(plain_log, 20)
    time.sleep(args.seconds)
    plain.terminate()
    plain.wait()
    plain_steps = steps_of(plain_log)[20:]

    log = os.path.join(out, "ready.steps")
    job = start_loop(args, log, ready=True)
    try:
        wait_steps(log, 20)
        time.sleep(args.seconds)
        trace = os.path.join(out, "capture.json")
        t0 = time.time()
        r = subprocess.run([args.cli, "capture", str(job.pid), "--iterations", str(args.iterations), "--out", trace],
                           capture_output=True, text=True)
        took = time.time() - t0
        if r.returncode != 0:
            print(r.stdout + r.stderr, file=sys.stderr)
            return 1
        time.sleep(args.seconds)
    finally:
        job.terminate()
        job.wait()

    return report(args, trace, log, plain_steps, took)


def report(args, trace, log, plain_steps, took):
    """The figures from a run's files: the trace, the ready job's step log and the plain loop's steps."""
    with open(trace) as f:
        d = json.load(f)
    base = d["baseTimeNanoseconds"]
    # The CPU ranges only: on a GPU torch also writes each range as a device-side span (gpu_user_annotation).
    spans = sorted((base + int(e["ts"] * 1000), base + int((e["ts"] + e["dur"]) * 1000)) for e in d["traceEvents"]
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and e.get("name", "").startswith("Optimizer.step#"))
    steps = steps_of(log)
    # Each span in the step whose window holds its middle (steps follow each other without a gap).
    held = [s[0] for a, b in spans for s in steps if s[1] <= (a + b) // 2 <= s[2]]
    by = {s[0]: s for s in steps}
    if len(held) != args.iterations:
        print("captured %d steps, found %d in the log" % (args.iterations, len(held)), file=sys.stderr)
        return 1
    first, last = min(held), max(held)
    cap_start, cap_end = by[first][1], by[last][2]
    span = args.seconds * 1e9
    groups = {
        "plain": plain_steps,
        "before": [s for s in steps if 20 <= s[0] < first and s[1] >= cap_start - span],
        "during": [by[i] for i in range(first, last + 1)],
        "right_after": [by[i] for i in range(last + 1, min(last + 1 + args.iterations, len(steps)))],
        "after": [s for s in steps if s[0] > last and s[1] <= cap_end + span],
    }
    med = {}
    for name, ss in groups.items():
        wall = [(s[2] - s[1]) / 1e6 for s in ss]
        cpu = [s[3] / 1e6 for s in ss]
        (mw, w10, w90), (mc, c10, c90) = spread(wall), spread(cpu)
        med[name] = (mw, mc)
        print("%-12s %4d steps  wall median %8.3f ms [p10 %8.3f - p90 %8.3f]   CPU median %8.3f ms [p10 %8.3f - p90 %8.3f]"
              % (name, len(ss), mw, w10, w90, mc, c10, c90))
    print("capture command took %.1f s (polls every 5 s; %d steps asked)" % (took, args.iterations))
    kv = {"steps_captured": args.iterations, "capture_s": took}
    for k, idx in (("wall", 0), ("cpu", 1)):
        b = med["before"][idx]
        kv[k + "_before_ms"] = b
        kv[k + "_during_over_before"] = med["during"][idx] / b
        kv[k + "_right_after_over_before"] = med["right_after"][idx] / b
        kv[k + "_after_over_before"] = med["after"][idx] / b
        kv[k + "_ready_over_plain"] = b / med["plain"][idx]
    print(" ".join("%s=%.4g" % (k, v) if isinstance(v, float) else "%s=%s" % (k, v) for k, v in kv.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
