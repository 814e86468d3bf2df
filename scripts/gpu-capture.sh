#!/usr/bin/env bash
# Issue 43 on a GPU box (the lead runs it through the `device` tool; carry [".devdeps"]): builds
# attnscope-cli (viewer, engine and tests off: capture needs none of them), starts a CUDA training
# loop with KINETO_USE_DAEMON=1 as a user would, captures 3 of its optimizer steps while it runs, and
# checks that the trace holds those steps' kernels; then the capture-cost benchmark on the GPU.
# Results go to $OUT (gpu-capture.txt, the trace, capture-cost.txt).
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
t0=$(date +%s)
cmake -S . -B build-gpu-capture -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_GUI=OFF -DATTNSCOPE_BENCH=OFF \
  -DATTNSCOPE_TESTS=OFF -DATTNSCOPE_ENGINE=OFF -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu-capture -j16 --target attnscope-cli >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
echo "built in $(($(date +%s) - t0)) s"
CLI=build-gpu-capture/bin/attnscope-cli
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
{
  echo "== a CUDA loop, started ready, captured for 3 steps"
  LOG=$OUT/cuda.steps
  rm -f "$LOG"
  KINETO_USE_DAEMON=1 KINETO_LOG_LEVEL=5 python3 tests/data/capture/train_loop.py --device cuda --hidden 4096 \
    --batch 1024 --sleep 0.02 --log "$LOG" >"$OUT/job.log" 2>&1 &
  JOB=$!
  for _ in $(seq 120); do [[ -f $LOG && $(wc -l <"$LOG") -ge 20 ]] && break; sleep 1; done
  $CLI capture "$JOB" --iterations 3 --out "$OUT/cuda-capture.json"
  echo "capture exit code: $?"
  sleep 2
  kill -0 "$JOB" && echo "the job still runs after the capture" || echo "THE JOB DIED"
  kill "$JOB"
  wait "$JOB" 2>/dev/null
  python3 - "$OUT/cuda-capture.json" "$LOG" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
base = d["baseTimeNanoseconds"]
cats = collections.Counter(e.get("cat") for e in ev if e.get("ph") == "X")
print("events by cat:", dict(cats))
# The CPU ranges only: on a GPU torch also writes each range as a device-side span (gpu_user_annotation).
opt = [e for e in ev if e.get("name", "").startswith("Optimizer.step#") and e.get("cat") == "user_annotation"]
steps = [tuple(map(int, l.split()[:3])) for l in open(sys.argv[2])]
held = [s[0] for e in opt for s in steps if s[1] <= base + int((e["ts"] + e["dur"] / 2) * 1000) <= s[2]]
print("optimizer steps in the trace:", len(opt), "-> the job's steps", held)
kernels = [e for e in ev if e.get("cat") == "kernel"]
print("kernels:", len(kernels), "per step:", len(kernels) / max(1, len(opt)))
print("gemm kernels:", sum(1 for k in kernels if "gemm" in k["name"].lower() or "sm90" in k["name"]))
print("OK" if len(opt) == 3 and kernels else "FAILED: no kernels or not 3 steps")
PY
  $CLI explain "$OUT/cuda-capture.json" | head -20
  echo "== the capture's cost on the GPU"
  python3 bench/capture_cost.py --cli "$CLI" --device cuda --hidden 4096 --batch 1024 --out "$OUT/cost" | tail -8
} 2>&1 | tee "$OUT/gpu-capture.txt"
