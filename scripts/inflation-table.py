#!/usr/bin/env python3
"""Per-step profiler inflation of engine runs (issue 17): for each run file, the
step's host time with no profiler (the host pass's median, with p10-p90), next
to its host window under our CUPTI trace pass (first measured iteration and
median) and under torch's profiler (torch pass). Prints a Markdown table.

  scripts/inflation-table.py [--step "QK MATMUL"] RUN.json...
"""
import argparse
import json
import statistics


def us(ns):
    return "-" if ns is None else f"{ns / 1000:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", default="QK MATMUL")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    print(f"| run | host pass it0 / median (p10-p90) us | CUPTI pass it0 / median us | torch pass it0 / median us "
          f"| CUPTI within 20% or 20 us: median / it0 | CUPTI / host median | events / op-events median us | dropped "
          f"| warm-up records left out | errors |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in a.runs:
        with open(path) as f:
            m = json.load(f).get("attnscope")
        if not m:
            continue  # not an engine run (torch's own trace)
        names = [s["name"] for s in m["steps"]]
        k = names.index(a.step)
        t = m["timing"]
        host = t.get("host", {}).get("spread", {}).get(a.step)
        host0 = t["host"]["steps"][0][k] if "host" in t and t["host"]["steps"] else None
        win = [it["host_end_ns"] - it["host_start_ns"] for it in m["steps"][k]["iterations"]]
        torch = [row[k] for row in t["torch"]["steps"]] if "torch" in t else []
        c = m["collection"]
        def within(x, ref):
            return "yes" if x <= ref * 1.2 or x - ref <= 20000 else "NO"
        # Like for like: the medians, and the first measured iterations.
        ok = f"{within(statistics.median(win), host['median_ns'])} / {within(win[0], host0)}" if host and win else "-"
        hs = f"{us(host0)} / {us(host['median_ns'])} ({us(host['p10_ns'])}-{us(host['p90_ns'])})" if host else "-"
        cs = f"{us(win[0])} / {us(statistics.median(win))}" if win else "-"
        ts = f"{us(torch[0])} / {us(statistics.median(torch))}" if torch else "-"
        ev = {x: t.get(x, {}).get("spread", {}).get(a.step, {}).get("median_ns") for x in ("events", "op-events")}
        es = f"{us(ev['events'])} / {us(ev['op-events'])}"
        ratio = f"{statistics.median(win) / host['median_ns']:.2f}" if host and win and host["median_ns"] > 0 else "-"
        print(f"| {path.rsplit('/', 1)[-1]} | {hs} | {cs} | {ts} | {ok} | {ratio} | {es} | {c['dropped_records']} "
              f"| {c.get('warmup_records_left_out', '-')} | {'; '.join(c.get('errors', [])) or 'none'} |")


if __name__ == "__main__":
    main()
