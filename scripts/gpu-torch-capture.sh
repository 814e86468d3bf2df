#!/usr/bin/env bash
# Re-captures the fixture that includes LibTorch's own profiler pass.
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}; mkdir -p "$OUT"
TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCOPE_GUI=OFF -DATTNSCOPE_TESTS=OFF -DATTNSCOPE_BENCH=OFF \
  -DATTNSCOPE_ENGINE=ON -DCMAKE_PREFIX_PATH="$TP" -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target attnscope-cli >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
build-gpu/bin/attnscope-cli run --device cuda --shape 8,16,1024,64 --wrap softmax --timing cupti,events,host,host-sync,torch \
  --out "$OUT/softmax_none_torch_8x16x1024x64.json"
