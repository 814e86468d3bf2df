"""The same package started as a script: python pkgroot/run_me.py from another folder."""
import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
from identity import identity  # noqa: E402

print(identity(globals()), flush=True)
import trainpkg.helpers  # noqa: E402,F401 - found through sys.path[0], the script's own folder

print("helpers from", os.path.dirname(trainpkg.helpers.__file__) == os.path.join(sys.path[0], "trainpkg"))
