#!/usr/bin/env python3
"""Issue 34's Scale benchmarks, side by side in one run, with ratios.

(a) HTA's TraceAnalysis (HolisticTraceAnalysis: the traces parsed, then get_comm_comp_overlap and
    get_temporal_breakdown) against `attnscope-cli ranks` cold (no cache: worker processes summarise,
    then the analysis) and warm (every summary cached), on the same copies of the shared sets;
(b) a generated 64-rank NCCL job (bench/make_ranks_job.py, one straggler): cold and warm, one rank's
    `ranks --summarize` alone (time and peak memory per rank), and HTA on the same folder.

Every measurement is a fresh child process: wall time, and peak resident memory from GNU time (the
largest single process of its tree: attnscope's parent or one worker; HTA's parent or one of its parser pool).

(c) issue 42's goals, side by side: the first open (no cache) of an 8-rank job of 151k events a rank
    (make_ranks_job.py --ranks 8 --kernels 6290) against 1.6 s and 75 MB peak; the 16-rank job
    (make_ranks_job.py --ranks 16) cold with the default workers against --jobs 1, alternated, best of 5
    each, and their ratio (goal: the default no slower). --baseline OTHER_CLI runs the same on another
    build beside it (main's, before the change).

usage: ranks_bench.py ATTNSCOPE_CLI [--shared DIR] [--ranks 64] [--jobs N] [--no-hta] [--only c]
                      [--baseline OTHER_CLI]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HTA = """
import sys, warnings, logging
warnings.filterwarnings("ignore"); logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
for f in ("get_comm_comp_overlap", "get_temporal_breakdown"):
    try:
        getattr(a, f)(visualize=False)
    except Exception as e:  # said beside its figures: the parse is measured all the same
        print(f"HTA: {f} failed: {type(e).__name__}: {e}", file=sys.stderr)
"""


def measure(cmd):
    """Wall time, and peak RSS of the largest process of the command's tree, by /usr/bin/time (GNU time
    forks the command from its own small process: a child of this Python would keep Python's RSS as its
    high-water mark across exec)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", tf.name, *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        lines = [x.split() for x in open(tf.name).read().splitlines()]
        lines = [x for x in lines if len(x) == 3 and x[0].isdigit()]
    ok = p.returncode == 0
    notes = [x for x in p.stderr.decode(errors="replace").splitlines() if x.startswith("HTA: ")]
    return {"notes": notes, "s": dt, "mb": int(lines[-1][0]) / 1024 if lines else 0, "ok": ok,
            "cpu": float(lines[-1][1]) + float(lines[-1][2]) if lines else 0,
            "err": "" if ok else p.stderr.decode(errors="replace").strip().splitlines()[-1:]}


def copy_set(src, dst):
    os.makedirs(dst, exist_ok=True)
    for f in glob.glob(os.path.join(src, "*trace*.json*")):
        if os.path.isfile(f):
            shutil.copy2(f, dst)
    return dst


def clear_cache(folder):
    for d in glob.glob(os.path.join(folder, "*.attnscope")):
        shutil.rmtree(d)


def fmt(m):
    if not m["ok"]:
        return f"  failed: {m['err']}"
    return f"{m['s']:8.3f} s {m['mb']:8.1f} MB" + "".join(f" [{n}]" for n in m.get("notes", []))


def ratio(a, b, key):
    return f"{a[key] / b[key]:8.1f}x" if a["ok"] and b["ok"] and b[key] > 0 else "       -"


def ours(cli, folder, jobs):
    clear_cache(folder)
    cold = measure([cli, "ranks", folder, "--format", "json", "--jobs", str(jobs)])
    warm = min((measure([cli, "ranks", folder, "--format", "json", "--cache-only"]) for _ in range(5)),
               key=lambda m: m["s"])
    return cold, warm


def issue42(cli, baseline, tmp):
    here = os.path.dirname(os.path.abspath(__file__))
    big = os.path.join(tmp, "job8x151k")
    small = os.path.join(tmp, "job16")
    subprocess.run([sys.executable, os.path.join(here, "make_ranks_job.py"), big, "--ranks", "8", "--kernels", "6290"],
                   check=True)
    subprocess.run([sys.executable, os.path.join(here, "make_ranks_job.py"), small, "--ranks", "16"], check=True)
    clis = [("this build", cli)] + ([("baseline", baseline)] if baseline else [])
    print(f"(c) issue 42 ({os.cpu_count()} cores; best of 5 runs each, alternated)")
    print(f"{'what':52} {'build':12} {'time':>10} {'peak RSS':>11}")
    for label, exe in clis:
        first = min((measure([exe, "ranks", big, "--format", "json", "--no-cache"]) for _ in range(5)),
                    key=lambda m: m["s"])
        goal = "  goals 1.6 s, 75 MB: " + ("met" if first["ok"] and first["s"] <= 1.6 and first["mb"] <= 75 else "NOT met")
        print(f"{'8 ranks x 151k events, first open --no-cache':52} {label:12} {fmt(first)}  "
              f"(CPU {first['cpu']:.2f} s){goal}")
    for label, exe in clis:
        default, one = [], []
        for _ in range(5):  # alternated, each from no cache
            clear_cache(small)
            default.append(measure([exe, "ranks", small, "--format", "json"]))
            clear_cache(small)
            one.append(measure([exe, "ranks", small, "--format", "json", "--jobs", "1"]))
        d = min(default, key=lambda m: m["s"])
        o = min(one, key=lambda m: m["s"])
        print(f"{'16 ranks, cold, default workers':52} {label:12} {fmt(d)}  (CPU {d['cpu']:.2f} s)")
        print(f"{'16 ranks, cold, --jobs 1':52} {label:12} {fmt(o)}  (CPU {o['cpu']:.2f} s)   default / --jobs 1: "
              f"{d['s'] / o['s']:.2f} ({'no slower' if d['s'] <= o['s'] * 1.05 else 'SLOWER'})")
    clear_cache(small)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces",
                                                     "multirank"))
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--kernels", type=int, default=2000, help="compute kernels a step (make_ranks_job.py)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-hta", action="store_true")
    ap.add_argument("--only", choices=["c"], help="run only section (c), issue 42's goals")
    ap.add_argument("--baseline", help="another attnscope-cli (an older build) measured beside it in (c)")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    if a.only == "c":
        with tempfile.TemporaryDirectory(prefix="attnscope-ranks-bench-") as tmp:
            issue42(cli, os.path.abspath(a.baseline) if a.baseline else None, tmp)
        return
    hta = not a.no_hta
    if hta:
        try:
            import hta as _  # noqa: F401
        except ImportError:
            print("HTA is not importable (pip install HolisticTraceAnalysis): its columns are left out")
            hta = False
    with tempfile.TemporaryDirectory(prefix="attnscope-ranks-bench-") as tmp:
        print(f"(a) HTA TraceAnalysis vs attnscope-cli ranks (--jobs {a.jobs}); {os.cpu_count()} cores")
        print(f"{'set':24} {'tool':28} {'time':>10} {'peak RSS':>11}   HTA/ours time, memory")
        for name in ["gloo_ddp4_straggler", "dlrm8_nccl_v100"]:
            folder = copy_set(os.path.join(a.shared, name), os.path.join(tmp, name))
            h = measure([sys.executable, "-c", HTA, folder]) if hta else None
            cold, warm = ours(cli, folder, a.jobs)
            if h:
                print(f"{name:24} {'HTA TraceAnalysis':28} {fmt(h)}")
            for label, m in [("attnscope cold (no cache)", cold), ("attnscope warm (cached)", warm)]:
                r = f"   {ratio(h, m, 's')} {ratio(h, m, 'mb')}" if h else ""
                print(f"{name:24} {label:28} {fmt(m)}{r}")
        print()
        job = os.path.join(tmp, f"job{a.ranks}")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_ranks_job.py"),
                        job, "--ranks", str(a.ranks), "--kernels", str(a.kernels)], check=True)
        size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(job, "*.json.gz")))
        print(f"(b) generated job: {a.ranks} ranks, {size / 1e6:.1f} MB gzipped "
              f"({size / a.ranks / 1e3:.0f} kB a rank), made in {time.perf_counter() - t0:.1f} s")
        one = os.path.join(job, "rank-0.pt.trace.json.gz")
        single = measure([cli, "ranks", "--summarize", one])
        cold, warm = ours(cli, job, a.jobs)
        h = measure([sys.executable, "-c", HTA, job]) if hta else None
        print(f"{'one rank: ranks --summarize':40} {fmt(single)}")
        print(f"{'job cold, ' + str(a.jobs) + ' workers':40} {fmt(cold)}   {cold['s'] / a.ranks * 1000:.1f} ms a rank"
              f" ({cold['s'] * a.jobs / a.ranks * 1000:.1f} ms of a core a rank)")
        print(f"{'job warm (cached)':40} {fmt(warm)}   {warm['s'] / a.ranks * 1000:.2f} ms a rank")
        if h:
            print(f"{'HTA TraceAnalysis':40} {fmt(h)}   HTA/ours cold: {ratio(h, cold, 's').strip()} time, "
                  f"{ratio(h, cold, 'mb').strip()} memory; HTA/ours warm: {ratio(h, warm, 's').strip()} time")


if __name__ == "__main__":
    main()
