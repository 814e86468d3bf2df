# Sourced by the device scripts (gpu-matrix.sh, gpu-ablate.sh, gpu-record.sh): builds the engine,
# the CLI and every gpu-labelled test (the attnscope_gpu_tests target) in build-gpu (Release, viewer
# off) against the box's LibTorch, logs to $OUT/build.log, and prints how long it took.
# Needs OUT and t0 set; exits the calling script when the build fails.
TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_GUI=OFF -DATTNSCOPE_BENCH=OFF \
  -DATTNSCOPE_ENGINE=ON -DCMAKE_PREFIX_PATH="$TP" -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target attnscope-cli attnscope-engine attnscope_gpu_tests >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
echo "built in $(($(date +%s) - t0)) s"
