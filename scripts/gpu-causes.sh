#!/usr/bin/env bash
# The diagnosis on traces whose main cost is known by construction (the device tool, carry
# [".devdeps"], with ../shared/tools/known_causes.py copied into .devdeps/): builds the engine and the
# CLI (viewer off), runs the gpu-labelled tests, captures every known_causes.py scenario (variants
# VARIANTS, default "a b") with torch.profiler, and prints, per trace, the expected cause beside the
# first three causes `attnscope-cli explain --format json` names. Traces and explain outputs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
t0=$(date +%s)
. "$(dirname "$0")/gpu-build.sh"
(cd build-gpu && timeout 200 ctest -L gpu --output-on-failure) 2>&1 | tail -25 >"$OUT/gpu-tests.log"
tail -3 "$OUT/gpu-tests.log"
KC=${KC:-.devdeps/known_causes.py}
for v in ${VARIANTS:-a b}; do
  timeout 240 python3 "$KC" "$OUT/causes_$v" --variant "$v" >"$OUT/causes_$v.tsv" 2>"$OUT/causes_$v.err" ||
    { echo "known_causes $v failed:"; tail -5 "$OUT/causes_$v.err"; }
  echo "captured variant $v at $(($(date +%s) - t0)) s"
done
python3 - "$OUT" build-gpu/bin/attnscope-cli <<'PY' | tee "$OUT/causes.txt"
import json, subprocess, sys, glob, os
out, cli = sys.argv[1], sys.argv[2]
for tsv in sorted(glob.glob(out + "/causes_*.tsv")):
    d = tsv[:-4]
    for line in open(tsv):
        name, expected = line.split("\t")[:2]
        trace = f"{d}/{name}.json.gz"
        r = subprocess.run([cli, "explain", trace, "--format", "json"], capture_output=True, text=True)
        open(f"{d}/{name}.explain.json", "w").write(r.stdout)
        t = subprocess.run([cli, "explain", trace], capture_output=True, text=True).stdout
        open(f"{d}/{name}.explain.txt", "w").write(t)
        try:
            causes = [(c["code"], round(c.get("share", 0) * 100, 1)) for c in json.loads(r.stdout)["diagnosis"]["causes"]][:3]
        except Exception as e:
            causes = f"ERROR rc={r.returncode} {r.stderr[:200]} {e}"
        top = causes[0][0] if isinstance(causes, list) and causes else "-"
        ok = "OK " if top == expected.split("+")[0] else "BAD"
        print(f"{ok} {os.path.basename(d)} {name}: expected {expected}; got {causes}")
PY
echo "done at $(($(date +%s) - t0)) s"
