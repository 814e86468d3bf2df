#!/usr/bin/env bash
# Issue 17's H200 matrix (the `device` tool, carry [".devdeps"]): build the
# engine and the CLI (viewer off), run the gpu-labelled tests, then 13 runs
# (wrap none/softmax/all/full x sync none/end, plus step, blocking,
# host-scalar, bf16 at 16x32x4096x128, cold) measured by every method over
# ITERS iterations, and print the per-step inflation table
# (scripts/inflation-table.py). Results go to $OUT; a small capture is kept
# as a fixture candidate.
#   scripts/gpu-matrix.sh [ITERS]
set -uo pipefail
ITERS=${1:-10}
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT/runs"
t0=$(date +%s)
. "$(dirname "$0")/gpu-build.sh"
CLI=build-gpu/bin/attnscope-cli
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=8,16,1024,64
T=cupti,events,host,host-sync,torch,op-events
R=$OUT/runs
run() {  # name, args...
  local name=$1
  shift
  timeout 120 $CLI run --device cuda --iters "$ITERS" --timing $T "$@" --out "$R/$name.json" >/dev/null 2>"$R/$name.err" ||
    echo "FAILED $name: $(tail -2 "$R/$name.err")"
  rm -f "$R/$name.torch.json"  # torch's own trace: large, and not an engine run
}
for wrap in none softmax all full; do
  for sync in none end; do run "${wrap}_${sync}" --shape $S --wrap $wrap --sync $sync; done
done
run all_step --shape $S --wrap all --sync step
run softmax_blocking --shape $S --wrap softmax --sync blocking
run softmax_hostscalar --shape $S --wrap softmax --scale host-scalar
run softmax_bf16_16x32x4096x128 --shape 16,32,4096,128 --dtype bfloat16 --wrap softmax
run softmax_cold --shape $S --wrap softmax --warmup 0
echo "runs done at $(($(date +%s) - t0)) s"
python3 scripts/inflation-table.py "$R"/*.json | tee "$OUT/inflation.md"
python3 scripts/inflation-table.py --step "SOFTMAX PASS" "$R"/*.json > "$OUT/inflation-softmax.md"
python3 - "$R" <<'PY' | tee "$OUT/collection.txt"
import json, sys, glob
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    m = json.load(open(p)).get("attnscope")
    if not m:
        continue
    c = m["collection"]
    print(p.rsplit("/", 1)[-1], {k: c[k] for k in ("cupti", "dropped_records", "buffers_pooled", "buffers_added",
          "records_without_timestamps", "warmup_records_left_out", "driver_work_records", "nvtx_ranges_pushed",
          "nvtx_ranges_seen", "clock")})
PY
echo "== gpu tests"
(cd build-gpu && timeout 200 ctest -L gpu --output-on-failure) 2>&1 | tail -25 | tee "$OUT/gpu-tests.log"
# A small capture for tests/data (the 1x8x64x64 shape, softmax wrapped, 3 iterations).
timeout 60 $CLI run --device cuda --shape 1,8,64,64 --wrap softmax --iters 3 --timing cupti,events,host,host-sync \
  --out "$OUT/softmax_none_1x8x64x64_iters3.json" >/dev/null || echo "FAILED small capture"
# One file back (the device tool brings back a few files only).
tar -C "$OUT" -czf "$OUT/runs.tgz" runs && rm -rf "$R"
echo "total $(($(date +%s) - t0)) s"
