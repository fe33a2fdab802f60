#!/usr/bin/env python3
"""How quickly the page follows a pen, in headless Chromium (the PyScript host):

    python3 benchmarks/drawing_page_bench.py [--runs 3]

Runs tests/browser/test_page_drawing.py's pen scenario (two 8-cell strokes on the digit pad,
one point per pointer event) --runs times and reads the figures it prints, which are the page's
own (performance.now() in the page): each reading's latency while the pen is down
(data-preview-ms) and the pipeline's, from the pen lifting to the last stage drawn
(data-last-render-ms). Targets: median reading within 200 ms; the pipeline within 1 s of each
lift. Exit status 1 when the median over the runs misses one (the machine's load is printed
first: on a busy machine trust a miss only after a second run).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"readings while the pen is down: (\d+), (\d+) ms median, (\d+) ms at most; "
                  r"pipeline drawn (\d+) ms and (\d+) ms after the pen lifted")
READING_MS, LIFT_MS = 200, 1000


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    print("load average: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    medians, lifts = [], []
    for run in range(args.runs):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-s", "-n", "0", "-p", "no:randomly",
             "tests/browser/test_page_drawing.py::test_the_reading_and_the_pipeline_follow_the_pen"],
            cwd=ROOT, capture_output=True, text=True)
        found = LINE.search(done.stdout)
        if done.returncode or not found:
            sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
            return 2
        n, median, top, first, second = map(int, found.groups())
        print("run %d: %d readings, %d ms median, %d ms at most; pipeline %d ms and %d ms after "
              "the lifts" % (run + 1, n, median, top, first, second))
        medians.append(median)
        lifts += [first, second]
    reading, lift = statistics.median(medians), statistics.median(lifts)
    print("median reading %.0f ms (target %d); pipeline after a lift %.0f ms (target %d)" % (
        reading, READING_MS, lift, LIFT_MS))
    return 0 if reading < READING_MS and lift < LIFT_MS else 1


if __name__ == "__main__":
    sys.exit(main())
