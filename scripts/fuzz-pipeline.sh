#!/usr/bin/env bash
# Runs the whole-pipeline fuzzer (tests/fuzz/fuzz_pipeline.cpp) for SECONDS on
# every core, the way docs/reliability.md counts it, and prints the last
# execution count. Built here with `cmake --build --preset fuzz --target
# fuzz_pipeline`; on the GPU box it runs from what the device tool carries:
# build-fuzz/bin/fuzz_pipeline, build-fuzz/libs (libsimdjson, libisal) and
# build-fuzz/corpus.
#   scripts/fuzz-pipeline.sh SECONDS [OUTDIR]
# OUTDIR (default $OUT, else ./fuzz-out) receives fuzz.log, artifacts/ (any
# crash, timeout or OOM input) and corpus.tgz (the grown corpus, to seed the
# next run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:?usage: scripts/fuzz-pipeline.sh SECONDS [OUTDIR]}
out=${2:-${OUT:-$PWD/fuzz-out}}
root=$PWD
mkdir -p "$out/artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp build-fuzz/corpus/* "$work/corpus/" 2>/dev/null || true
export LD_LIBRARY_PATH="$root/build-fuzz/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$work"
timeout $((secs + 20)) "$root/build-fuzz/bin/fuzz_pipeline" -entropic=0 -max_len=16384 -max_total_time="$secs" \
  -fork="$(nproc)" -timeout=10 -rss_limit_mb=4096 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -artifact_prefix="$out/artifacts/" "$work/corpus" > "$out/fuzz.log" 2>&1 || true
grep -E "^#[0-9]+: cov" "$out/fuzz.log" | tail -1 || echo "no execution count in $out/fuzz.log"
ls "$out/artifacts" || true
(cd "$work/corpus" && tar czf "$out/corpus.tgz" .)
