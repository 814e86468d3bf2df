#!/usr/bin/env python3
"""`attnscope-cli ranks` on jobs simulated by jobsim.py, scored against their construction.

  sweep.py CLI [--jobs N] [--seed S] [--shape P] [--scenario X] [--keep DIR] [-v]
               [--gate-recall R] [--gate-false F] [--gate-shape-recall R] [--gate-shape-false F] [--gate-cause C]
               [--gate-schedule S] [--gate-schedule-said S]

Per job: the CLI's JSON on the job's folder (exit 0 expected, even with a rank missing or a step more or
less). A true straggler is recalled when one named straggler has exactly its ranks and its steps within one
step of the truth's (each truth step has a named step at most one away and the other way round). A job
without a late rank (no injection, or a slow link that lengthens every rank's collectives alike) with
any straggler named is a false positive. The cause is scored apart: data loading injected must read
slow_region 'data_loading'; a slower kernel must read slow_work or a region of the step's work
(forward/backward), never a host call that only waited for the device.
In a pipeline, a pipeline_schedule finding (a stage last by the schedule) must name exactly one stage (all its
replicas, by construction); with 2 or more replicas a GPipe schedule makes the first stage last at the step's
closing all-reduce, so the finding is expected there.
Exit 1 when a gate fails, 2 on an error (the CLI failing on a job).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobsim  # noqa: E402


def within_one(found, truth, order):
    f = [order[s] for s in found if s in order]
    t = [order[s] for s in truth]
    if len(f) != len(found) or not f or not t:
        return False
    return all(any(abs(a - b) <= 1 for b in f) for a in t) and all(any(abs(a - b) <= 1 for b in t) for a in f)


def cause_ok(truth, s):
    if truth["where"] == "loader":
        return s["cause"] == "slow_region" and s["region"] == "data_loading"
    return s["cause"] == "slow_work" or (s["cause"] == "slow_region" and s["region"] in ("forward", "backward"))


def run_one(cli, seed, shape, scenario, root, keep):
    job, files = jobsim.generate(seed, shape, scenario)
    folder = os.path.join(root, "job-%d" % seed)
    jobsim.write(job, files, folder)
    p = subprocess.run([cli, "ranks", folder, "--format", "json", "--no-cache", "--jobs", "1"],
                       capture_output=True, text=True)
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    if p.returncode != 0:
        return job, None, "exit %d: %s" % (p.returncode, p.stderr.strip()[:300])
    return job, json.loads(p.stdout), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--jobs", type=int, default=360)
    ap.add_argument("--seed", type=int, default=4200)
    ap.add_argument("--shape")
    ap.add_argument("--scenario")
    ap.add_argument("--gate-recall", type=float, default=0)
    ap.add_argument("--gate-false", type=float, default=1)
    ap.add_argument("--gate-shape-recall", type=float, default=0, help="recall on every parallelism")
    ap.add_argument("--gate-shape-false", type=float, default=1, help="false-positive rate on every parallelism")
    ap.add_argument("--gate-cause", type=float, default=0, help="share of the recalled with their cause right")
    ap.add_argument("--gate-schedule", type=float, default=0,
                    help="share of the pipeline_schedule findings whose ranks are exactly one stage")
    ap.add_argument("--gate-schedule-said", type=float, default=0,
                    help="share of the pipelines of 2 or more replicas where the schedule is said")
    ap.add_argument("--keep")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="jobsim-")
    with ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda k: run_one(a.cli, a.seed + k, a.shape, a.scenario, root, a.keep),
                              range(a.jobs)))
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)
    per = {}  # key -> [truths, recalled, exact, cause right, clean jobs, false jobs, extra stragglers]
    misses, falses, errors = [], [], []
    # The pipeline's schedule: a finding's ranks must be exactly one stage (all its replicas), by construction.
    sched = [0, 0, 0, 0]  # multi-replica pipeline jobs, those with the schedule said, findings, exactly a stage
    wrong_sched = []
    for job, out, err in results:
        keys = ["scenario " + job["scenario"], "shape " + job["shape"], "all"]
        for k in keys:
            per.setdefault(k, [0] * 7)
        desc = "seed %d %s %s world %d C %d jitter %.1f%% late %.1f ms" % (
            job["seed"], job["shape"], job["scenario"], job["world"], job["collectives_per_step"],
            100 * job["jitter"], job["late_ns"] / 1e6)
        if err:
            errors.append(desc + ": " + err)
            continue
        stages = []
        if job["shape"] == "pp":
            P = job["stages"]
            gone = job["faults"].get("missing_rank")  # a deleted file's rank is not read
            stages = [sorted(d * P + st for d in range(job["world"] // P) if d * P + st != gone) for st in range(P)]
        said = [f for f in out["findings"] if f["kind"] == "pipeline_schedule"]
        if len(stages) and len(stages[0]) >= 2:
            sched[0] += 1
            sched[1] += bool(said)
        for f in said:
            sched[2] += 1
            sched[3] += sorted(f["ranks"]) in stages
            if sorted(f["ranks"]) not in stages:
                wrong_sched.append(desc + ": " + f["text"][:200])
        order = {s: i for i, s in enumerate(job["steps"])}
        found = [dict(s, used=False) for s in out["stragglers"]]
        for t in job["stragglers"]:
            hit = next((f for f in found if not f["used"] and sorted(f["ranks"]) == t["ranks"]
                        and within_one(f["steps"], t["steps"], order)), None)
            for k in keys:
                per[k][0] += 1
                if hit:
                    per[k][1] += 1
                    per[k][2] += sorted(hit["steps"], key=order.get) == t["steps"]
                    per[k][3] += cause_ok(t, hit)
            if hit:
                hit["used"] = True
                if not cause_ok(t, hit) and a.v:
                    misses.append(desc + ": cause %s '%s' for %s" % (hit["cause"], hit["region"], t["where"]))
            else:
                misses.append(desc + ": truth %s @ %s (%s); found %s" % (
                    t["ranks"], ",".join(s.split("#")[1] for s in t["steps"]), t["where"],
                    [(f["ranks"], ",".join(s.split("#")[-1] for s in f["steps"]), f["late_ns"] // 1000)
                     for f in found] or "none"))
        extra = [f for f in found if not f["used"]]
        for k in keys:
            if not job["stragglers"]:
                per[k][4] += 1
                per[k][5] += bool(extra)
            per[k][6] += len(extra)
        if extra:
            falses.append(desc + ": " + str([(f["ranks"], ",".join(s.split("#")[-1] for s in f["steps"]),
                                              "%d us" % (f["late_ns"] // 1000), f["cause"], f["region"])
                                             for f in extra]))
    print("%-22s %13s %7s %7s %12s %8s" % ("", "recall", "exact", "cause", "false", "extras"))
    for k in sorted(per, key=lambda k: (k == "all", k)):
        t, r, e, c, n, fj, x = per[k]
        print("%-22s %4d/%-4d %3.0f%% %6s %6s %4d/%-4d %2.0f%% %5d" % (
            k, r, t, 100.0 * r / t if t else 100, "%d" % e if t else "-", "%d" % c if t else "-",
            fj, n, 100.0 * fj / n if n else 0, x))
    for m in misses:
        print("  miss: " + m)
    for f in falses:
        print("  extra: " + f)
    for e in errors:
        print("  error: " + e)
    print("pipeline schedule: said in %d of %d pipeline jobs with 2 or more replicas; its ranks exactly one stage in "
          "%d of %d findings" % (sched[1], sched[0], sched[3], sched[2]))
    for w in wrong_sched:
        print("  not one stage: " + w)
    t, r, _, _, n, fj, _ = per["all"]
    ok = True
    if errors:
        print("FAIL: the CLI failed on %d jobs" % len(errors))
        return 2
    if t and r / t < a.gate_recall:
        print("FAIL: recall %.3f < %.3f" % (r / t, a.gate_recall))
        ok = False
    if n and fj / n > a.gate_false:
        print("FAIL: false stragglers in %.3f of the clean jobs > %.3f" % (fj / n, a.gate_false))
        ok = False
    for k, v in sorted(per.items()):
        if not k.startswith("shape "):
            continue
        if v[0] and v[1] / v[0] < a.gate_shape_recall:
            print("FAIL: %s recall %.3f < %.3f" % (k, v[1] / v[0], a.gate_shape_recall))
            ok = False
        if v[4] and v[5] / v[4] > a.gate_shape_false:
            print("FAIL: %s false stragglers in %.3f of its clean jobs > %.3f" % (k, v[5] / v[4], a.gate_shape_false))
            ok = False
    if sched[2] and sched[3] / sched[2] < a.gate_schedule:
        print("FAIL: the pipeline_schedule findings exactly one stage in %.3f < %.3f" % (sched[3] / sched[2],
                                                                                       a.gate_schedule))
        ok = False
    if sched[0] and sched[1] / sched[0] < a.gate_schedule_said:
        print("FAIL: the pipeline schedule said in %.3f of the pipelines with replicas < %.3f" % (
            sched[1] / sched[0], a.gate_schedule_said))
        ok = False
    if r and per["all"][3] / r < a.gate_cause:
        print("FAIL: the cause right for %.3f of the recalled < %.3f" % (per["all"][3] / r, a.gate_cause))
        ok = False
    print("%s: recall %d/%d, false stragglers in %d/%d clean jobs, cause right %d/%d" % (
        "PASS" if ok else "FAIL", r, t, fj, n, per["all"][3], r))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
