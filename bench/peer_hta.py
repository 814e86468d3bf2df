#!/usr/bin/env python3
"""P2 peer: HolisticTraceAnalysis (PyPI HolisticTraceAnalysis) loads one trace
and computes its GPU kernel breakdown; prints the times as key=value.

  python3 bench/peer_hta.py TRACE[.json|.json.gz]

HTA reads a directory of per-rank traces: the file is linked into a temporary
directory as rank 0. Its own worker pool is left at HTA's defaults."""
import os
import resource
import sys
import tempfile
import time


def main() -> int:
    path = os.path.abspath(sys.argv[1])
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as e:  # not installed: say so, the caller reports it
        print(f"hta_error=not-installed ({e})")
        return 1
    with tempfile.TemporaryDirectory() as d:
        link = os.path.join(d, os.path.basename(path))
        os.symlink(path, link)
        t0 = time.perf_counter()
        analyzer = TraceAnalysis(trace_files={0: link}, trace_dir=d)
        t1 = time.perf_counter()
        by_type, by_kernel = analyzer.get_gpu_kernel_breakdown(visualize=False)
        t2 = time.perf_counter()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"kernel types: {len(by_type)}, kernel rows: {len(by_kernel)}", file=sys.stderr)
    print(f"hta_load_s={t1 - t0:.3f} hta_kernel_breakdown_s={t2 - t1:.3f} hta_peak_rss_mb={rss_mb:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
