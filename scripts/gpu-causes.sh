#!/usr/bin/env bash
# The diagnosis on traces whose main cost is known by construction (the device tool, carry
# [".devdeps"], with ../shared/tools/known_causes.py copied into .devdeps/): builds the engine and the
# CLI (viewer off), runs the gpu-labelled tests, captures every known_causes.py scenario (variants
# VARIANTS, default "a b") with torch.profiler, and prints, per trace, the expected cause beside the
# first three causes `attnscope-cli explain --format json` names. The device tool brings back at most
# 8 files: the captures and their explain outputs stay in $WORK (default /tmp/causes); $OUT gets the
# summary, the logs and one tar of the traces whose first cause was not the expected one.
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
t0=$(date +%s)
. "$(dirname "$0")/gpu-build.sh"
(cd build-gpu && timeout 200 ctest -L gpu --output-on-failure) 2>&1 | tail -25 >"$OUT/gpu-tests.log"
tail -3 "$OUT/gpu-tests.log"
# The run record on the GPU, every pass in a child of its own (--sync blocking) and every method.
build-gpu/bin/attnscope-cli run --device cuda --sync blocking --iters 3 --wrap softmax \
  --timing cupti,events,host,host-sync,torch,op-events --out "$OUT/run_blocking.json" >/dev/null 2>"$OUT/run_blocking.err" &&
  build-gpu/bin/attnscope-cli explain "$OUT/run_blocking.json" >"$OUT/run_blocking.explain.txt" 2>&1
rm -f "$OUT"/run_blocking.torch.json; [ -s "$OUT/run_blocking.err" ] || rm -f "$OUT/run_blocking.err"
KC=${KC:-.devdeps/known_causes.py}
WORK=${WORK:-/tmp/causes}
mkdir -p "$WORK"
for v in ${VARIANTS:-a b}; do
  timeout 240 python3 "$KC" "$WORK/causes_$v" --variant "$v" >"$WORK/causes_$v.tsv" 2>"$WORK/causes_$v.err" ||
    { echo "known_causes $v failed:"; tail -5 "$WORK/causes_$v.err"; }
  echo "captured variant $v at $(($(date +%s) - t0)) s"
done
python3 - "$WORK" build-gpu/bin/attnscope-cli <<'PY' | tee "$OUT/causes.txt"
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
        if ok == "BAD":
            open(out + "/bad.list", "a").write(f"{os.path.basename(d)}/{name}.json.gz\n{os.path.basename(d)}/{name}.explain.json\n")
PY
if [ -s "$WORK/bad.list" ]; then tar -C "$WORK" -cf "$OUT/bad.tar" -T "$WORK/bad.list"; ls -la "$OUT/bad.tar"; fi
echo "done at $(($(date +%s) - t0)) s"
