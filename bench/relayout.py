#!/usr/bin/env python3
"""Writes a trace again the way Python users' tools do, for the reader's layout benchmark:
  minified: json.dump(trace, f, separators=(",", ":"))   (no newline anywhere)
  array:    json.dump(trace["traceEvents"], f)             (the top-level array form, one line)
usage: relayout.py IN.json OUT.json minified|array"""
import json
import sys

src, out, how = sys.argv[1], sys.argv[2], sys.argv[3]
with open(src) as f:
    trace = json.load(f)
with open(out, "w") as f:
    if how == "minified":
        json.dump(trace, f, separators=(",", ":"))
    elif how == "array":
        json.dump(trace["traceEvents"], f)
    else:
        sys.exit("how: minified or array")
