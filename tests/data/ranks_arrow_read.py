#!/usr/bin/env python3
"""Reads attnscope's per-rank summary files (Arrow IPC) with pyarrow, pandas and DuckDB only: no code
of attnscope's. Prints JSON: per cache folder and table, every column's values as pyarrow read them
(floats as repr), pandas' row count, and DuckDB's collectives per rank over all folders.
Exits 77 (skip) naming the module when pyarrow, pandas or duckdb is not importable.

usage: ranks_arrow_read.py CACHE_FOLDER...
"""
import json
import math
import sys

try:
    import duckdb
    import pandas as pd
    import pyarrow as pa
    import pyarrow.feather as feather
except ImportError as e:  # the test skips, saying why
    print(f"SKIP: {e.name} is not importable ({e})")
    sys.exit(77)

import glob
import os


def value(v):
    if isinstance(v, float):
        return repr(v) if not math.isfinite(v) else v
    return v


out = {"folders": {}, "duckdb_collectives": {}}
collectives = []
for folder in sys.argv[1:]:
    tables = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.arrow"))):
        name = os.path.basename(path)[: -len(".arrow")]
        t = feather.read_table(path)  # pyarrow
        df = pd.read_feather(path)  # pandas
        cols = {}
        for f in t.schema:
            cols[f.name] = {"type": str(f.type), "values": [value(x) for x in t.column(f.name).to_pylist()]}
        meta = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}
        tables[name] = {"columns": cols, "rows": t.num_rows, "pandas_rows": len(df), "metadata": meta}
        if name == "collectives":
            collectives.append(t)
    out["folders"][folder] = tables

if collectives:
    allc = pa.concat_tables(collectives)  # noqa: F841 (DuckDB finds it by name)
    rows = duckdb.sql("SELECT rank, count(*) AS n FROM allc GROUP BY rank ORDER BY rank").fetchall()
    out["duckdb_collectives"] = {str(r): n for r, n in rows}
print(json.dumps(out))
