#!/usr/bin/env python3
"""A distributed job too large for one machine, summarised by Dask distributed.

Maps `attnscope-cli ranks --summarize TRACE` (one rank's trace to its Arrow summary files, cached next to
the trace) over the job's files on Dask workers, then runs the job analysis from the summaries alone
(`attnscope-cli ranks --cache-only`): the result is the one `attnscope-cli ranks PATH...` gives.

Workers must see the traces at the same paths (a shared file system), as the summaries are written
next to the traces (or, where that folder is read-only, to each worker's $ATTNSCOPE_CACHE_DIR, which
must then be shared too). Each task is one process loading one trace: a worker's memory is bounded by
the largest rank it summarises.

usage: ranks_dask.py [--cli PATH] [--scheduler ADDRESS | --workers N] [--format text|json] [-o FILE] PATH...
  --cli PATH          attnscope-cli to run (default: $ATTNSCOPE_CLI, else attnscope-cli on PATH)
  --scheduler ADDR    an existing Dask scheduler (tcp://host:8786); else a LocalCluster of processes
  --workers N         the LocalCluster's worker processes (default: the cores)
"""
import argparse
import os
import shutil
import subprocess
import sys


def summarize(cli, trace):
    """One rank: its trace summarised into its cache by attnscope-cli in a process of its own."""
    p = subprocess.run([cli, "ranks", "--summarize", trace], capture_output=True, text=True)
    return {"trace": trace, "code": p.returncode, "dir": p.stdout.strip(), "stderr": p.stderr.strip()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="PATH")
    ap.add_argument("--cli", default=os.environ.get("ATTNSCOPE_CLI") or shutil.which("attnscope-cli"))
    ap.add_argument("--scheduler")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--format", choices=["text", "json"], default="text")
    ap.add_argument("-o", "--output")
    a = ap.parse_args(argv)
    if not a.cli or not os.access(a.cli, os.X_OK):
        print("ranks_dask: no attnscope-cli (give --cli PATH or set ATTNSCOPE_CLI)", file=sys.stderr)
        return 2
    cli = os.path.abspath(a.cli)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:
        print(f"ranks_dask: dask.distributed is not importable ({e}): pip install 'dask[distributed]'",
              file=sys.stderr)
        return 2

    listing = subprocess.run([cli, "ranks", "--list", *a.paths], capture_output=True, text=True)
    if listing.returncode != 0:
        sys.stderr.write(listing.stderr)
        return listing.returncode
    files = [os.path.abspath(f) for f in listing.stdout.splitlines() if f]

    if a.scheduler:
        client = Client(a.scheduler)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=max(1, a.workers), threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
    try:
        results = client.gather(client.map(summarize, [cli] * len(files), files, pure=False))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    failed = [r for r in results if r["code"] != 0]
    for r in failed:
        print(f"ranks_dask: {r['trace']}: summarising failed (exit {r['code']}): {r['stderr']}", file=sys.stderr)
    if failed:
        return 2

    cmd = [cli, "ranks", "--cache-only", "--format", a.format, *a.paths]
    if a.output:
        cmd += ["-o", a.output]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
