#!/bin/bash
# On the GPU box (many CPUs; no GPU needed): the first open's time on 1, 2, 4 and 8 CPUs (taskset),
# cache off, for issue 44's "designed to reach 5x on 8". Builds the CLI and the bench there (viewer
# and engine off), generates the 1 GB trace from SOURCE (default: the H200 training capture, which the
# caller copies into the tree: untracked files travel), and runs `explain` RUNS times per CPU count.
# Each run's stderr is kept as $OUT/open-cpusCPUS-runRUN.txt: with ATTNSCOPE_REPORT_SPANS=1 in the
# environment it holds the open's span log (scripts/spans-report.py ONE_CPU_LOG EIGHT_CPU_LOG puts two
# side by side).
# Usage: scripts/gpu-scaling.sh [SOURCE] [RUNS]   (writes $OUT/scaling.txt when OUT is set)
set -u
SRC=${1:-gpu-in/transformer_train20.json.gz}
RUNS=${2:-3}
OUT=${OUT:-/tmp}
t0=$(date +%s)
cmake -S . -B build-scaling -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_GUI=OFF -DATTNSCOPE_ENGINE=OFF \
  -DATTNSCOPE_TESTS=OFF -DATTNSCOPE_BENCH=ON -DATTNSCOPE_DEPS_DIR="$PWD/.devdeps" >"$OUT/build.log" 2>&1 &&
  cmake --build build-scaling -j16 --target attnscope-cli attnscope-bench >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
echo "built in $(($(date +%s) - t0)) s; $(nproc) CPUs: $(lscpu | grep 'Model name' | sed 's/.*: *//')"
T=/tmp/scaling_1G.json
[ -f $T ] || build-scaling/bin/attnscope-bench gen -o $T --size 1G --source "$SRC" >/dev/null
CLI=build-scaling/bin/attnscope-cli
for n in 1 8; do
  ATTNSCOPE_CACHE=off ATTNSCOPE_THREADS=$n $CLI explain --format json --all $T | md5sum | sed "s/^/explain json md5, $n threads: /"
done
for cpus in 0 0-1 0-3 0-7; do
  for i in $(seq "$RUNS"); do
    s=$(date +%s.%N)
    ATTNSCOPE_CACHE=off ATTNSCOPE_REPORT_OPEN=1 taskset -c $cpus $CLI explain $T >/dev/null 2>"$OUT/open-cpus$cpus-run$i.txt"
    e=$(date +%s.%N)
    printf "cpus=%-4s wall=%.3f %s\n" $cpus "$(awk "BEGIN{print $e - $s}")" \
      "$(grep -o 'open_parse_s=[^ ]* open_build_s=[^ ]* open_snapshot_s=[^ ]*' "$OUT/open-cpus$cpus-run$i.txt")"
  done
done | tee "$OUT/scaling.txt"
