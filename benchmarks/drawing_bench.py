"""How often the tiny ViT reads drawn digits right: ``python3 benchmarks/drawing_bench.py``.

Draws tests/browser/handwriting.py's digits (three writing styles, in the pad's middle and
anywhere on it: small, off the middle or slanted) through the pad's own ink code
(web/js/digits/ink.js, run in Node), and prints for each digit how many the model reads right as drawn
and as prepared for it (fitted to the data set's box, as the page sends them), then the time
Node takes to prepare one drawing against drawing it alone (the floor), in one run.
``--per-digit N`` (default 50) drawings of each digit in each style and place; ``--seed``.
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "browser")]

import handwriting  # noqa: E402
from training import ink_node  # noqa: E402
from pycore import load_tiny_vit  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-digit", type=int, default=50)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    model = load_tiny_vit()
    sets = handwriting.drawing_sets(args.per_digit, args.seed)
    totals = {"rasterize": [0, 0], "prepared": [0, 0]}
    print("digits read right, of %d drawings each (as drawn -> prepared)" % args.per_digit)
    print("%-8s %-9s " % ("style", "place") + " ".join("%9d" % d for d in range(10)) + "      all")
    for (style, place), (drawings, labels) in sets.items():
        right = {}
        for fn in totals:
            images = np.array(ink_node.pixels(drawings, fn), float).reshape(-1, 8, 8)
            right[fn] = model.predict(images) == labels
            totals[fn][0] += int(right[fn].sum())
            totals[fn][1] += len(labels)
        print("%-8s %-9s " % (style, place) + " ".join(
            "%4d->%-4d" % (right["rasterize"][labels == d].sum(), right["prepared"][labels == d].sum())
            for d in range(10)) + "  %4.1f%%->%4.1f%%" % (100 * right["rasterize"].mean(),
                                                         100 * right["prepared"].mean()))
    print("overall: as drawn %.1f%%, prepared %.1f%% (%d drawings)" % (
        100.0 * totals["rasterize"][0] / totals["rasterize"][1],
        100.0 * totals["prepared"][0] / totals["prepared"][1], totals["prepared"][1]))
    drawings = [d for ds, _ in sets.values() for d in ds]
    times = {"rasterize": [], "prepared": []}
    for _ in range(3):  # interleaved, whole batches in one Node process each
        for fn in times:
            t0 = time.perf_counter()
            ink_node.pixels(drawings, fn)
            times[fn].append(time.perf_counter() - t0)
    per = {fn: 1000 * min(t) / len(drawings) for fn, t in times.items()}
    print("Node, per drawing (best of 3 batches, process start included): drawn %.3f ms, "
          "prepared %.3f ms (%.2fx)" % (per["rasterize"], per["prepared"],
                                       per["prepared"] / per["rasterize"]))


if __name__ == "__main__":
    main()
