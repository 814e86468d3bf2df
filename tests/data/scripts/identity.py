"""What a script sees of how it was started, as one JSON line (`identity: {...}`): the test compares
the line printed under `record` with the one plain Python prints."""
import json
import os
import sys


def identity(globals_):
    import __main__

    spec = globals_.get("__spec__")
    return "identity: " + json.dumps({
        "name": globals_["__name__"],
        "file": globals_.get("__file__"),
        "spec": [spec.name, spec.origin] if spec else None,
        "package": globals_.get("__package__"),
        "path0": sys.path[0],
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "main_is_this": sys.modules["__main__"].__dict__ is globals_,
        "main_file": getattr(__main__, "__file__", None),
    }, sort_keys=True)
