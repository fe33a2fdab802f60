#!/usr/bin/env python3
"""What the model's own head and the head at every depth cost an edit and a stroke, side by
side with the same requests without them, in one run (CPython, the session answering the page's
requests; docs/performance.md, "The model's own head and the lens").

    python benchmarks/lens_bench.py [--runs 15]

1. A ViT-B/16 model file (W_head 768 x 1000, 64 CLS vectors, gamma/beta, bias, 13 depths of
   hidden_cls): one typed edit of cls[0,0] answered, with the page's head shown, with the
   model's own head, and with the model's own head and its lens (hidden_cls in the file).
2. The tiny ViT: a stroke's "digit" request (8 x 8 pixels, every stage redrawn) and its
   "digit_preview" (the top 3 while the pen is down), with the lens and with the lens
   section left out (the same session code, its lens builder replaced by one that shows none).

Medians of the runs, milliseconds; each pair is measured interleaved, so that a busy machine
slows both alike.
"""
import argparse
import io
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from model_files import open_file  # noqa: E402
from pycore.explorer.panels import head as panels  # noqa: E402
from pycore.explorer.session import Session  # noqa: E402


def vit_b16_file(depths):
    rng = np.random.RandomState(0)
    D, C, B = 768, 1000, 64
    h = np.cumsum(rng.standard_normal((13, B, D)), axis=0).astype(np.float32)
    arrays = dict(W_head=(rng.standard_normal((D, C)) * 0.02).astype(np.float32), cls=h[-1],
                  ln_gamma=(1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
                  ln_beta=(0.1 * rng.standard_normal(D)).astype(np.float32),
                  b_head=(0.1 * rng.standard_normal(C)).astype(np.float32))
    if depths:
        arrays["hidden_cls"] = h
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def timed(session, request):
    text = json.dumps(request)
    t0 = time.perf_counter()
    answer = session.handle_json(text)
    ms = (time.perf_counter() - t0) * 1000
    assert answer["ok"], answer["error"]
    return ms


def edits(runs):
    sessions = {}
    for label, depths, head in (("the page's head", False, "page"), ("the model's own head", False, None),
                                ("own head + lens (13 depths)", True, None)):
        s = Session()
        answer, _ = open_file(s, "vit.npz", vit_b16_file(depths))
        assert answer["ok"], answer["error"]
        if head:
            assert s.handle({"op": "option", "name": "head", "value": head})["ok"]
        sessions[label] = s
    times = {label: [] for label in sessions}
    for k in range(runs):
        for label, s in sessions.items():
            times[label].append(timed(s, {"op": "edit", "key": "cls", "index": [0, 0],
                                          "text": "%.2f" % (1 + 0.01 * k), "commit": True}))
    print("A typed edit of cls[0,0], ViT-B/16 file (64 x 768, 1000 classes), median of %d:" % runs)
    base = statistics.median(times["the page's head"])
    for label, t in times.items():
        print("  %-30s %7.1f ms  (x%.2f)" % (label, statistics.median(t), statistics.median(t) / base))


def strokes(runs):
    rng = np.random.RandomState(1)
    images = [[[[int(v) for v in row] for row in rng.randint(0, 17, (8, 8))]] for _ in range(runs)]
    real = panels.lens_heatmap
    with_lens, without = Session(), Session()
    times = {"digit, with the lens": [], "digit, without": [], "digit_preview": []}
    for k in range(runs):
        panels.lens_heatmap = real
        times["digit, with the lens"].append(timed(with_lens, {"op": "digit", "images": images[k]}))
        panels.lens_heatmap = lambda state, trace: None
        try:
            times["digit, without"].append(timed(without, {"op": "digit", "images": images[k]}))
        finally:
            panels.lens_heatmap = real
        times["digit_preview"].append(timed(with_lens, {"op": "digit_preview", "images": images[k]}))
    print("A stroke of the tiny ViT (8 x 8 pixels, every stage redrawn), median of %d:" % runs)
    base = statistics.median(times["digit, without"])
    for label, t in times.items():
        print("  %-30s %7.1f ms  (x%.2f)" % (label, statistics.median(t), statistics.median(t) / base))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=15)
    args = p.parse_args(argv)
    print("CPython %s, NumPy %s" % (sys.version.split()[0], np.__version__))
    edits(args.runs)
    strokes(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
