#!/usr/bin/env bash
# The overhead benchmark on the H200 (P5), run through the `device` tool with
# carry [".devdeps"]: builds the engine, the CLI, the benchmark and the gpu
# test there (viewer off), runs the gpu-labelled test, then our collector vs
# LibTorch's profiler vs none, with the ablations of our collector.
# A device command may run 10 minutes: `gpu-overhead.sh build` builds, runs
# the gpu test and one capture; `gpu-overhead.sh bench [ROUNDS]` runs the
# comparison (default 30 rounds, the figure docs/timing-methods.md reports)
# and the ablations (3 rounds) on the warm box; `all [ROUNDS]` does both
# (about 330 s for 30 rounds).
set -uo pipefail
STAGE=${1:-all}
ROUNDS=${2:-30}
OUT=${OUT:-/tmp/attnscope-out}; mkdir -p "$OUT"
TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
if [[ $STAGE != bench ]]; then
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCOPE_GUI=OFF \
  -DATTNSCOPE_ENGINE=ON -DATTNSCOPE_WERROR=OFF -DCMAKE_PREFIX_PATH="$TP" -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target attnscope-cli attnscope-engine attnscope-bench test_gpu_run >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
echo "g++ warnings (errors here): $(grep -c "warning:" "$OUT/build.log")"; grep -A3 "warning:" "$OUT/build.log" | head -20
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd build-gpu && timeout 60 ctest -L gpu --output-on-failure) >"$OUT/gpu-tests.log" 2>&1
tail -5 "$OUT/gpu-tests.log"
# One capture with the current engine: which API calls it records, and its notes.
build-gpu/bin/attnscope-cli run --device cuda --wrap softmax --out "$OUT/softmax_none_1x8x64x64_new.json" >/dev/null &&
  python3 - "$OUT/softmax_none_1x8x64x64_new.json" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
c = collections.Counter(e["name"] for e in d["traceEvents"] if e.get("cat") in ("cuda_runtime", "cuda_driver"))
print("API records:", dict(c))
print("notes:", d["attnscope"]["notes"])
print("collection:", d["attnscope"]["collection"])
PY
fi
if [[ $STAGE != build ]]; then
{
echo "== ours vs torch, 1x8x64x64, --wrap all, $ROUNDS rounds"
timeout 330 build-gpu/bin/attnscope-bench overhead --shape 1,8,64,64 --calls 300 --batches 9 --rounds "$ROUNDS"
echo "== ablations, 1x8x64x64, --wrap all"
timeout 240 build-gpu/bin/attnscope-bench overhead --shape 1,8,64,64 --calls 300 --batches 7 --rounds 3 --ablations
} 2>&1 | tee "$OUT/overhead.txt"
fi
