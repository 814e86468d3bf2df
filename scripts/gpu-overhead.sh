#!/usr/bin/env bash
# The overhead benchmark on the H200 (P5): our collector vs LibTorch's
# profiler vs none, each mode a child process, rounds interleaved.
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}; mkdir -p "$OUT"
TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCOPE_GUI=OFF -DATTNSCOPE_TESTS=OFF \
  -DATTNSCOPE_ENGINE=ON -DCMAKE_PREFIX_PATH="$TP" -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
B=build-gpu/bin/attnscope-bench
{
echo "== default collector, 1x8x64x64"; $B overhead --shape 1,8,64,64 --calls 3000 --rounds 7
echo "== default collector, 8x16x1024x64"; $B overhead --shape 8,16,1024,64 --calls 300 --rounds 5
echo "== without memory reports, 1x8x64x64"; ATTNSCOPE_NO_MEMORY=1 $B overhead --shape 1,8,64,64 --calls 3000 --rounds 7 | tail -1
echo "== CUPTI minimal kinds, 1x8x64x64"; ATTNSCOPE_CUPTI_MINIMAL=1 $B overhead --shape 1,8,64,64 --calls 3000 --rounds 7 | tail -1
} 2>&1 | tee "$OUT/overhead.txt"
