#!/usr/bin/env python3
"""Issue 44: the five questions of docs/query.md, asked in DuckDB of `attnscope-cli export --parquet`,
against attnscope-cli's own figures for the same traces.

  test_export_queries.py CLI QUERIES_DIR TRACE...

Each query file (docs/queries/*.sql, exactly as the docs show it) runs on the exported tables; the
answer is checked against what the CLI prints:
  top_kernels_per_step  explain --format json --all: each step's launches (every one: --all), kernels by GPU time, top three
  launching_op          kernels --group-by op --format json: every (kernel, op) row, calls and time
  idle_gaps             info --format json: the GPU's busy union, rebuilt from every gap (threshold 0);
                        explain --format json: each step's idle time from the same gaps; and the
                        1 ms answer is exactly the gaps over 1 ms
  step_time_by_cause    explain --format json: the diagnosis's parts of every step
  ops_that_allocate     memory --format csv: the allocations by op and device, top ten
Exit 77 (skipped) when duckdb cannot be imported.
"""
import collections
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

try:
    import duckdb
except ImportError:
    print("skipped: python3 cannot import duckdb (scripts/test installs it: ATTNSCOPE_PYCHECKS=ON)")
    sys.exit(77)

TABLES = ["slice", "thread_track", "counter", "counter_track", "flow", "args", "step", "step_cause"]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def cli(binary, *args):
    env = dict(os.environ, ATTNSCOPE_CACHE="off")
    r = subprocess.run([binary, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def statements(path):
    """The file's statements; comments left out."""
    text = "\n".join(line for line in open(path) if not line.strip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def run(con, path, **variables):
    *setup, query = statements(path)
    for s in setup:
        con.execute(s)
    for k, v in variables.items():
        con.execute(f"SET VARIABLE {k} = {v}")
    return con.execute(query).fetchall()


def top_kernels_expected(explain):
    out = []
    for k, st in enumerate(explain["steps"]):
        by = collections.defaultdict(lambda: [0, 0])
        for l in st["launches"]:
            if l["kind"] in ("kernel", "communication"):
                by[l["name"]][0] += 1
                by[l["name"]][1] += l["gpu_end_ns"] - l["gpu_start_ns"]
        ranked = sorted(by.items(), key=lambda kv: (-kv[1][1], kv[0]))[:3]
        out += [(k, st["name"], name, calls, ns) for name, (calls, ns) in ranked]
    return out


def check_trace(binary, qdir, trace, tmp):
    name = os.path.basename(trace)
    out = os.path.join(tmp, name + ".parquet")
    cli(binary, "export", trace, "--parquet", out)
    con = duckdb.connect()
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{os.path.join(out, t + '.parquet')}')")
    explain = json.loads(cli(binary, "explain", trace, "--format", "json", "--all"))
    q = lambda f, **v: run(con, os.path.join(qdir, f), **v)

    # 1. Top kernels per step.
    got = [tuple(int(x) if isinstance(x, (int,)) else x for x in r) for r in q("top_kernels_per_step.sql")]
    want = top_kernels_expected(explain)
    check(got == want, f"{name}: top kernels per step: {len(got)} rows from DuckDB, {len(want)} from explain"
          + ("" if got == want else f" (first difference: {next((a, b) for a, b in zip(got + [None] * len(want), want + [None] * len(got)) if a != b)})"))

    # 2. The launching op of each kernel.
    got = sorted((k, op, calls, int(ns)) for k, op, calls, ns in q("launching_op.sql"))
    kernels = json.loads(cli(binary, "kernels", trace, "--group-by", "op", "--format", "json"))["kernels"]
    want = sorted((r["name"], r["op"] or "(no op)", r["calls"], r["total_ns"]) for r in kernels
                  if r["kind"] in ("kernel", "communication"))
    check(got == want, f"{name}: launching op: {len(got)} (kernel, op) rows from DuckDB, {len(want)} from kernels")

    # 3. Idle gaps: every gap (threshold 0) gives back the busy union info reports and each step's idle
    # time explain reports; the 1 ms answer is exactly those gaps over 1 ms.
    every = q("idle_gaps.sql", min_gap_ns=0)
    over = q("idle_gaps.sql")
    check(over == [g for g in every if g[2] > 1_000_000], f"{name}: the 1 ms gaps are not the long ones of all gaps")
    span = con.execute("SELECT min(ts), max(ts + dur) FROM slice WHERE category IN "
                       "('kernel','gpu_memcpy','gpu_memset') AND dur > 0").fetchone()
    ledger = json.loads(cli(binary, "info", trace, "--format", "json"))["ledger"]
    if span[0] is not None:
        union = (span[1] - span[0]) - sum(g[2] for g in every)
        check(union == ledger["gpu_union_ns"], f"{name}: GPU busy union {union} from the gaps, {ledger['gpu_union_ns']} in info")
        busy = [(span[0], every[0][0] if every else span[1])]
        busy += [(every[i][1], every[i + 1][0] if i + 1 < len(every) else span[1]) for i in range(len(every))]
        for st in explain["steps"]:
            a, b = st["host_start_ns"], st["host_end_ns"]
            inside = sum(max(0, min(e, b) - max(s, a)) for s, e in busy)
            check((b - a) - inside == st["idle_ns"],
                  f"{name}: step {st['name']}: idle {(b - a) - inside} from the gaps, {st['idle_ns']} in explain")

    # 4. Step time by cause.
    got = sorted((s, n, c, ns) for s, n, c, ns, _ in q("step_time_by_cause.sql"))
    labels = dict(con.execute("SELECT DISTINCT cause, label FROM step_cause").fetchall())
    want = []
    for k, st in enumerate(explain["diagnosis"]["steps"]):
        want += [(k, st["name"], labels.get(c, c), ns) for c, ns in st["parts"].items() if ns]
        check(sum(st["parts"].values()) == st["end_ns"] - st["start_ns"], f"{name}: step {st['name']}: parts do not add up")
    check(got == sorted(want), f"{name}: step time by cause: {len(got)} rows from DuckDB, {len(want)} from explain")

    # 5. The ops that allocate most.
    got = [(op, dev, n, int(b)) for op, dev, n, b in q("ops_that_allocate.sql")]
    rows = list(csv.DictReader(io.StringIO(cli(binary, "memory", trace, "--format", "csv"))))
    by = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        key = (r["op"] or "(no op)", r["device"])
        by[key][0] += 1
        by[key][1] += int(r["bytes"])
    want = sorted(((op, dev, n, b) for (op, dev), (n, b) in by.items()), key=lambda r: (-r[3], r[0], r[1]))[:10]
    check(got == want, f"{name}: ops that allocate: {got[:2]} from DuckDB, {want[:2]} from memory")
    print(f"{name}: five queries checked ({len(every)} gaps, {len(rows)} allocations, "
          f"{len(explain['steps'])} steps)")


def main():
    binary, qdir, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            check_trace(binary, qdir, t, tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print(f"all checks passed on {len(traces)} traces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
