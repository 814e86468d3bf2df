#!/usr/bin/env python3
"""Where a first open's time went, from attnscope-cli's span log (ATTNSCOPE_REPORT_SPANS=1; lines
"span NAME thread T START END"), e.g. the files `ATTNSCOPE_REPORT_SPANS=1 scripts/gpu-scaling.sh` leaves in $OUT.

  spans-report.py LOG            per span name: count, the threads' summed time, first start, last end
  spans-report.py ONE MANY       the same names side by side: wall on ONE (one CPU) and on MANY, MANY's
                                 summed time, its threads busy on average (sum / wall), and the speedup
"""
import collections
import re
import sys


def load(path):
    spans = collections.OrderedDict()
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"span (.*) thread (\d+) ([\d.]+) ([\d.]+)$", line.strip())
        if not m:
            continue
        start, end = float(m.group(3)), float(m.group(4))
        a = spans.setdefault(m.group(1), [0, 0.0, float("inf"), 0.0])
        a[0] += 1
        a[1] += end - start
        a[2] = min(a[2], start)
        a[3] = max(a[3], end)
    return spans


def main(argv):
    if len(argv) == 2:
        print("%-45s %6s %8s %8s %8s" % ("span", "count", "sum s", "first", "last"))
        for name, (n, total, first, last) in load(argv[1]).items():
            print("%-45s %6d %8.3f %8.3f %8.3f" % (name, n, total, first, last))
        return 0
    if len(argv) == 3:
        one, many = load(argv[1]), load(argv[2])
        print("%-45s %8s %8s %8s %6s %7s" % ("span", "1: wall", "N: wall", "N: sum", "busy", "speedup"))
        for name, (_, total, first, last) in many.items():
            wall = last - first
            w1 = one[name][3] - one[name][2] if name in one else float("nan")
            print("%-45s %8.3f %8.3f %8.3f %6.2f %7.2f" % (name, w1, wall, total, total / wall if wall else 0,
                                                          w1 / wall if wall else 0))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
