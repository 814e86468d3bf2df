#!/usr/bin/env bash
# A short check on the H200 box (the `device` tool, carry [".devdeps"]): build the engine and the
# CLI (viewer off), run the gpu-labelled tests, record one engine capture (softmax wrapped, its
# memory events now carry block addresses) and run the views, explain and compare on it. Results go
# to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_GUI=OFF -DATTNSCOPE_BENCH=OFF \
  -DATTNSCOPE_ENGINE=ON -DCMAKE_PREFIX_PATH="$TP" -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
CLI=build-gpu/bin/attnscope-cli
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
echo "== gpu tests"
(cd build-gpu && ctest -L gpu --output-on-failure) 2>&1 | tee "$OUT/gpu-tests.log" | tail -15
echo "== capture"
C="$OUT/softmax_none_addr_8x16x1024x64.json"
$CLI run --device cuda --shape 8,16,1024,64 --wrap softmax --timing cupti,events,host,host-sync --out "$C" || echo FAILED capture
{
  for v in overview kernels memory modules; do echo "== $v"; $CLI "$v" "$C" --format text; done
  echo "== explain"; $CLI explain "$C" | head -40
  echo "== compare with a capture without wrapping"
  $CLI run --device cuda --shape 8,16,1024,64 --wrap none --timing cupti,host --out "$OUT/none.json" >/dev/null &&
    $CLI compare "$OUT/none.json" "$C" | head -40
} 2>&1 | tee "$OUT/views.txt" | head -80
rm -f "$OUT/none.json" "$OUT/build.log"
ls -la "$OUT"
