#!/usr/bin/env python3
"""tools/ranks_dask.py on a LocalCluster of worker processes against the in-process run.

A copy of a shared multi-rank set (its traces only) in a temporary folder: `attnscope-cli ranks --no-cache
--format json` (every rank summarised in one process, no cache) is the expected result; ranks_dask.py maps
`ranks --summarize` over the files on 2 Dask worker processes, then analyses the job from the cached
summaries (--cache-only). Asserts: the JSON reports are equal; there was no cache before the Dask map
(the in-process run writes none) and every trace has its summary folder with the 7 tables after it (the
analysis, --cache-only, reads no trace: it would exit 2 on a missing summary).
Exits 77 (skipped) when dask.distributed is not importable.

usage: test_ranks_dask.py ATTNSCOPE_CLI SET_FOLDER
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import dask.distributed  # noqa: F401
except ImportError as e:
    print(f"SKIP: dask.distributed is not importable ({e}); pip install 'dask[distributed]' to run this test")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import ranks_dask  # noqa: E402


def main():
    cli, src = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="attnscope-dask-") as tmp:
        for f in glob.glob(os.path.join(src, "*trace*.json*")):
            shutil.copy2(f, tmp)
        expected = subprocess.run([cli, "ranks", "--no-cache", "--format", "json", tmp], capture_output=True,
                                  text=True, check=True).stdout
        assert not glob.glob(os.path.join(tmp, "*.attnscope")), "--no-cache wrote a cache"
        out = os.path.join(tmp, "dask.json")
        code = ranks_dask.main(["--cli", cli, "--workers", "2", "--format", "json", "-o", out, tmp])
        assert code == 0, f"ranks_dask exited {code}"
        got = open(out).read()
        traces = sorted(glob.glob(os.path.join(tmp, "*trace*.json.gz")))
        for t in traces:
            d = t + ".attnscope"
            tables = sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "*.arrow")))
            assert len(tables) == 7, f"{d}: {tables}"
        e, g = json.loads(expected), json.loads(got)
        assert e == g, "the Dask run's report differs from the in-process run's"
        print(f"OK: {len(traces)} ranks summarised by Dask workers; report equal to the in-process run "
              f"({len(e['collectives']['matched'])} collectives matched, stragglers {[s['rank'] for s in e['stragglers']]})")


# Dask's worker processes import this module again: the test runs only as the main script.
if __name__ == "__main__":
    main()
