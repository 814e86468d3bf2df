#!/usr/bin/env bash
# Runs every benchmark of docs/performance.md on this machine, one after the
# other, and prints each command with its full output (the last line of each
# is key=value pairs). Huge generated traces go to OUT (default /tmp/perf),
# never into the repository.
#
#   bench/run_all.sh [BUILD_DIR] [OUT]     # BUILD_DIR default build-release
#
# Needs python3 (json.loads), HolisticTraceAnalysis for the P2 peer
# (pip install HolisticTraceAnalysis psutil), ~6 GB free in OUT, and Xvfb for
# the xcb start figure (skipped without it).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-release}
out=${2:-/tmp/perf}
bench=$build/bin/attnscope-bench
train=../shared/traces/h200/transformer_train20.json.gz
mkdir -p "$out"
[[ -x $bench ]] || { echo "build first: cmake --preset release && ninja -C build-release" >&2; exit 2; }
[[ -f $train ]] || { echo "missing $train" >&2; exit 2; }

run() {
  echo
  echo "\$ $*"
  "$@"
}

echo "== machine"
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|L2|L3|Flags)' | sed 's/^Flags:.*avx512f.*/Flags: ... avx2 avx512f .../'
free -g | head -2
uname -r
uptime

echo "== P1 load"
run "$bench" load "$train"
gzip -dc "$train" > "$out/transformer_train20.json"
run "$bench" load "$out/transformer_train20.json"

echo "== P2 aggregate"
run "$bench" aggregate "$train"

echo "== P3 huge"
for size in 1G 4G; do
  f=$out/huge_$size.json
  [[ -f $f ]] || run "$bench" gen --size "$size" -o "$f"
  run "$bench" huge "$f"
done
# The 1 GB trace gzip'd: inflated window by window, it never exists whole.
[[ -f $out/huge_1G.json.gz ]] || gzip -1 -c "$out/huge_1G.json" > "$out/huge_1G.json.gz"
run "$bench" huge "$out/huge_1G.json.gz"

echo "== opening a view after the load"
run "$bench" views
echo "== hostile shapes next to an ordinary trace"
run "$bench" hostile --dir "$out"

echo "== P4 timeline"
for n in 3000000 10000000; do
  run "$bench" timeline --events "$n"
done

echo "== P6 start"
run "$bench" start --runs 7
if command -v Xvfb > /dev/null; then
  Xvfb :93 -screen 0 1920x1080x24 > /dev/null 2>&1 &
  xvfb=$!
  sleep 2
  DISPLAY=:93 run "$bench" start --runs 7 --platform xcb || true
  kill "$xvfb"
fi

echo "== issue 43: what a capture costs the job (needs python3 with torch)"
run python3 bench/capture_cost.py --cli "$build/bin/attnscope-cli" --out "$out/capture-cost"
