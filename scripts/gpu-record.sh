#!/usr/bin/env bash
# `record` on the GPU box (the `device` tool, carry [".devdeps"]): the box's own compiler builds the
# engine, the CLI and every gpu-labelled test with warnings as errors; ctest -L gpu runs them
# (test_gpu_record: tests/data/scripts/cuda_train.py recorded with each --sync, wrapped and not,
# and its per-step CUDA time table); then a torch.compile'd model on CUDA (inductor), plain and
# recorded with --wrap-modules children, and the whole tree (benchmarks too) built. Results in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
t0=$(date +%s)
{
  g++ --version | head -1
  command -v clang++ >/dev/null && clang++ --version | head -1
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__)'
} 2>&1 | tee "$OUT/box.txt"
. "$(dirname "$0")/gpu-build.sh"
echo "warnings in the build: $(grep -c 'warning:' "$OUT/build.log")"
echo "== gpu tests"
(cd build-gpu && ctest -L gpu --output-on-failure) 2>&1 | tee "$OUT/gpu-tests.log" | grep -v "^PASS"
echo "== a compiled model on CUDA (inductor), plain, then recorded with --wrap-modules children"
S=tests/data/scripts/compiled_model.py
python3 $S --device cuda 2>&1 | tail -1
build-gpu/bin/attnscope-cli record --wrap-modules children --keep-running --out "$OUT/compiled.json" -- \
  python3 $S --device cuda 2>&1 | grep -v "^\[attnscope\] step" | tee "$OUT/compiled.txt"
tar -C /tmp -czf "$OUT/gpu-record-traces.tgz" $(cd /tmp && ls attnscope-gpu-record-*.json 2>/dev/null)
echo "== the whole tree, benchmarks too"
cmake -S . -B build-gpu -DATTNSCOPE_BENCH=ON >>"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 && echo "whole tree built: $(grep -c 'warning:' "$OUT/build.log") warnings" ||
  { echo "whole tree: FAILED"; grep -B2 -A8 "error" "$OUT/build.log" | head -60; }
echo "done in $(($(date +%s) - t0)) s"
