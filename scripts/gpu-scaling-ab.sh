#!/bin/bash
# On the GPU box: an older tree (gpu-old/, e.g. `git archive COMMIT | tar -x -C gpu-old`, with .devdeps
# copied in) against this one (.), the first open of the 1 GB trace (gpu-in/transformer_train20.json.gz
# copied in as for gpu-scaling.sh), explain, cache off,
# in interleaved rounds on 1 and 8 CPUs (both builds' explain JSON md5 first).
# Usage: scripts/gpu-scaling-ab.sh [ROUNDS]
set -u
b() { (cd "$1" && cmake -S . -B build-scaling -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_GUI=OFF -DATTNSCOPE_ENGINE=OFF \
  -DATTNSCOPE_TESTS=OFF -DATTNSCOPE_BENCH=ON -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >/dev/null 2>&1 &&
  cmake --build build-scaling -j16 --target attnscope-cli attnscope-bench >/dev/null 2>&1) || echo "build $1 failed"; }
b gpu-old; b .
T=/tmp/scaling_1G.json
[ -f $T ] || build-scaling/bin/attnscope-bench gen -o $T --size 1G --source gpu-in/transformer_train20.json.gz >/dev/null
for d in gpu-old .; do
  ATTNSCOPE_CACHE=off ATTNSCOPE_THREADS=8 $d/build-scaling/bin/attnscope-cli explain --format json --all $T | md5sum |
    sed "s|^|$d: explain json md5, 8 threads: |"
done
one() {
  s=$(date +%s.%N)
  ATTNSCOPE_CACHE=off ATTNSCOPE_REPORT_OPEN=1 taskset -c $2 $1/build-scaling/bin/attnscope-cli explain $T >/dev/null 2>/tmp/err.txt
  e=$(date +%s.%N)
  printf "%s cpus=%-4s wall=%.3f %s\n" $1 $2 "$(awk "BEGIN{print $e - $s}")" \
    "$(grep -o 'open_parse_s=[^ ]* open_build_s=[^ ]* open_snapshot_s=[^ ]*' /tmp/err.txt)"
}
for r in $(seq ${1:-5}); do
  for c in 0 0-7; do one gpu-old $c; one . $c; done
done
