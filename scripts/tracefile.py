"""Reading a trace file for the scripts here: Chrome JSON, plain or .json.gz."""
import gzip
import json


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)
