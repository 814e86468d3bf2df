#!/usr/bin/env bash
# What we run on the H200 box (the `device` tool): build the engine and the
# CLI there against that box's LibTorch (viewer off), run the gpu-labelled
# tests, capture the fixtures of tests/data/h200/, and run the overhead
# benchmark. Results go to $OUT. The box has no simdjson package: the
# headers and library travel in .devdeps/ (ATTNSCOPE_DEPS_DIR; scripts/devdeps.sh
# makes it; the device call carries it: carry [".devdeps"]).
set -uo pipefail
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCOPE_GUI=OFF \
  -DATTNSCOPE_ENGINE=ON -DCMAKE_PREFIX_PATH="$TP" -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
CLI=build-gpu/bin/attnscope-cli
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

echo "== gpu tests"
(cd build-gpu && ctest -L gpu --output-on-failure) 2>&1 | tee "$OUT/gpu-tests.log" | tail -30

echo "== captures"
D=$OUT/h200; mkdir -p "$D"
S=8,16,1024,64
T=cupti,events,host,host-sync
for wrap in none softmax qk,softmax all full; do
  for sync in none end; do
    name=${wrap/,/+}_${sync}_8x16x1024x64
    $CLI run --device cuda --shape $S --wrap $wrap --sync $sync --timing $T --out "$D/$name.json" || echo "FAILED $name"
  done
done
$CLI run --device cuda --shape $S --wrap softmax --warmup 0 --timing $T --out "$D/softmax_none_cold_8x16x1024x64.json" || echo FAILED cold
$CLI run --device cuda --shape $S --wrap softmax --scale host-scalar --timing $T --out "$D/softmax_none_hostscalar_8x16x1024x64.json" || echo FAILED hostscalar
$CLI run --device cuda --shape $S --wrap softmax --timing $T,torch --out "$D/softmax_none_torch_8x16x1024x64.json" || echo FAILED torch
$CLI run --device cuda --shape 1,8,64,64 --wrap softmax --timing $T --out "$D/softmax_none_1x8x64x64.json" || echo FAILED small
$CLI run --device cuda --shape $S --wrap all --sync step --timing $T --out "$D/all_step_8x16x1024x64.json" || echo FAILED step
$CLI run --device cuda --shape $S --wrap softmax --sync blocking --timing $T --out "$D/softmax_blocking_8x16x1024x64.json" || echo FAILED blocking
ls -la "$D" | tee "$OUT/captures.txt"
tar -C "$OUT" -czf "$OUT/h200-captures.tgz" h200 && rm -rf "$D"

# The overhead benchmark has its own script: scripts/gpu-overhead.sh.
