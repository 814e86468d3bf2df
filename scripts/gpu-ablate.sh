#!/usr/bin/env bash
# Issue 17's remaining inflation (the device tool, carry [".devdeps"]): which
# part of our collector lengthens QK MATMUL's window in the trace pass. Builds
# the engine and the CLI, runs the gpu-labelled tests, then `run --timing
# host,cupti` with 50 iterations under each ablation knob (op_recorder.cpp,
# cupti_collector.cpp),
# repeated and interleaved, and prints per-run host vs trace-window medians.
#   [VARIANTS="base TRACE_FIRST ..."] scripts/gpu-ablate.sh [REPEATS] [WRAP/SYNC...]
# HOSTSCALAR: --scale host-scalar (no H2D copy and stream sync in SCALE).
# TRACE_FIRST: the trace pass before the others (the order before issue 17).
# SHAPES: with --record-shapes (input shapes are off by default).
# LEAN: no NVTX ranges of our own either. SKIP_kernel+runtime: RECORDER_OFF
# with those CUPTI kinds left out (ATTNSCOPE_CUPTI_SKIP); NOTHING: the recorder's
# timestamps only, no CUPTI. PIN_4 / PIN_4-5: the whole run under `taskset -c`.
# SHAPE, DTYPE and ITERS (default 8,16,1024,64, float32, 50) set the workload;
# SKIP_TESTS=1 leaves out the gpu-labelled tests.
set -uo pipefail
REPS=${1:-3}
shift || true
CASES=${*:-all/end none/end all/none}
OUT=${OUT:-/tmp/attnscope-out}
R=$OUT/ablate
mkdir -p "$R"
t0=$(date +%s)
. "$(dirname "$0")/gpu-build.sh"
if [ -z "${SKIP_TESTS:-}" ]; then
  (cd build-gpu && timeout 200 ctest -L gpu --output-on-failure) 2>&1 | tail -25 >"$OUT/gpu-tests.log"
  tail -3 "$OUT/gpu-tests.log"
fi
CLI=build-gpu/bin/attnscope-cli
variants=${VARIANTS:-base SHAPES TRACE_FIRST NO_NVTX NO_MEMORY RECORDER_OFF DISABLE_CUPTI CUPTI_MINIMAL}
timestamps_only=(ATTNSCOPE_NO_NVTX=1 ATTNSCOPE_NO_MEMORY=1 ATTNSCOPE_NO_EXTID=1)  # the recorder reduced to timestamps
for rep in $(seq 1 "$REPS"); do
  for c in $CASES; do
    wrap=${c%/*} sync=${c#*/}
    for v in $variants; do
      env=() extra=() pin=()
      case $v in
        base) ;;
        SHAPES) extra=(--record-shapes) ;;
        HOSTSCALAR) extra=(--scale host-scalar) ;;
        LEAN) env=(ATTNSCOPE_NO_NVTX=1) ;;
        PIN_*) pin=(taskset -c "${v#PIN_}") ;;
        SKIP_*) env=("${timestamps_only[@]}" "ATTNSCOPE_CUPTI_SKIP=${v#SKIP_}") ;;
        NOTHING) env=("${timestamps_only[@]}" ATTNSCOPE_DISABLE_CUPTI=1) ;;
        RECORDER_OFF) env=("${timestamps_only[@]}") ;;
        *) env=("ATTNSCOPE_$v=1") ;;
      esac
      f="$R/${wrap}_${sync}.$v.$rep.json"
      env "${env[@]}" "${pin[@]}" timeout 60 $CLI run --device cuda --shape "${SHAPE:-8,16,1024,64}" \
        --dtype "${DTYPE:-float32}" --wrap "$wrap" --sync "$sync" --iters "${ITERS:-50}" --timing host,cupti "${extra[@]}" --out "$f" >/dev/null 2>"$f.err" || echo "FAILED $f: $(tail -2 "$f.err")"
    done
  done
done
echo "runs done at $(($(date +%s) - t0)) s"
python3 - "$R" <<'PY' | tee "$OUT/ablate.txt"
import glob, json, statistics, sys, collections
rows = collections.defaultdict(list)
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    case, v, rep, _ = p.rsplit("/", 1)[-1].split(".")
    m = json.load(open(p))["attnscope"]
    for k, s in enumerate(m["steps"]):
        win = [it["host_end_ns"] - it["host_start_ns"] for it in s["iterations"]]
        sp = m["timing"]["host"]["spread"][s["name"]]
        host0 = m["timing"]["host"]["steps"][0][k]
        rows[(case, s["name"], v)].append((host0, sp["median_ns"], win[0], statistics.median(win), sp["p10_ns"],
                                           sp["p90_ns"]))
print("case | step | variant | host it0 / median us (per repeat) | trace it0 / median us | median excess us"
      " | trace/host median ratio (range) | host p90/p10 (median over repeats)")
for (case, step, v), rs in sorted(rows.items()):
    ex = [r[3] - r[1] for r in rs]
    ratio = sorted(r[3] / r[1] for r in rs)
    print(f"{case} | {step} | {v} | " + " ".join(f"{r[0]/1e3:.0f}/{r[1]/1e3:.1f}" for r in rs) + " | "
          + " ".join(f"{r[2]/1e3:.0f}/{r[3]/1e3:.1f}" for r in rs) + f" | {statistics.median(ex)/1e3:+.1f}"
          + f" | {statistics.median(ratio):.2f} ({ratio[0]:.2f}-{ratio[-1]:.2f})"
          + f" | {statistics.median(r[5] / r[4] for r in rs):.2f}")
for p in sorted(glob.glob(sys.argv[1] + "/*.1.json")):
    c = json.load(open(p))["attnscope"]["collection"]
    print(p.rsplit("/", 1)[-1], {k: c.get(k) for k in ("cupti", "errors", "gpu_activities", "gpu_linked_to_op",
          "api_calls", "api_calls_with_call_id", "dropped_records")})
PY
# The first repeat's traces of the first case back, one per variant, for the
# per-op breakdown.
first=${CASES%% *}
tar -C "$R" -czf "$OUT/ablate-traces.tgz" $(cd "$R" && ls "${first/\//_}".*.1.json 2>/dev/null)
rm -rf "$R"  # the device tool brings back a few files only
echo "total $(($(date +%s) - t0)) s"
