#!/bin/bash
# On the GPU box (many CPUs): the span log of the 1 GB trace's first open (explain, cache off) on 1, 2 and
# 8 CPUs, RUNS times each, into $OUT/spans-cpusCPUS-runRUN.txt, and each run's wall time on stdout. The trace is
# generated from gpu-in/transformer_train20.json.gz as in gpu-scaling.sh (copy it into the tree first).
# Then, here: scripts/spans-report.py ONE_CPU_LOG EIGHT_CPU_LOG (each span side by side).
# Usage: scripts/gpu-spans.sh [RUNS]
set -u
OUT=${OUT:-/tmp}
cmake -S . -B build-scaling -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_GUI=OFF -DATTNSCOPE_ENGINE=OFF \
  -DATTNSCOPE_TESTS=OFF -DATTNSCOPE_BENCH=ON -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-scaling -j16 --target attnscope-cli attnscope-bench >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
T=/tmp/scaling_1G.json
[ -f $T ] || build-scaling/bin/attnscope-bench gen -o $T --size 1G --source gpu-in/transformer_train20.json.gz >/dev/null
CLI=build-scaling/bin/attnscope-cli
ATTNSCOPE_CACHE=off ATTNSCOPE_THREADS=8 $CLI explain --format json --all $T | md5sum | sed "s/^/explain json md5, 8 threads: /"
for r in $(seq "${1:-3}"); do
  for cpus in 0 0-1 0-7; do
    s=$(date +%s.%N)
    ATTNSCOPE_CACHE=off ATTNSCOPE_REPORT_OPEN=1 ATTNSCOPE_REPORT_SPANS=1 taskset -c $cpus $CLI explain $T >/dev/null \
      2>"$OUT/spans-cpus$cpus-run$r.txt"
    e=$(date +%s.%N)
    printf "cpus=%-4s wall=%.3f %s\n" $cpus "$(awk "BEGIN{print $e - $s}")" \
      "$(grep -o 'open_parse_s=[^ ]* open_build_s=[^ ]* open_snapshot_s=[^ ]*' "$OUT/spans-cpus$cpus-run$r.txt")"
  done
done
