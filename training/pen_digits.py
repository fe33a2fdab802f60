"""Pen drawings of the digits for training: the shapes people draw on the page's pad, made from a
few skeletons per digit and drawn through the pad's own ink code (web/js/digits/ink.js, in Node), so
the model learns what the page will send it.

The data set's digits were written on paper by 43 people in 1998, and some common shapes are
rare in it: a "7" without a crossbar, a "4" closed at the top, a "1" as one plain stroke. Each
skeleton here is a list of strokes through control points in a unit box (row, column in 0..1),
smoothed by a Catmull-Rom curve (a repeated point makes a corner). Every drawing moves each
control point a little, then stretches, slants and turns the whole, and places it on the pad at
any size; the pad's preparation (`prepared` in js/digits/ink.js) then fits it to the data set's box.

These skeletons were written for training and are not the tests' drawings
(tests/browser/handwriting.py), which measure how often drawings are read right.
"""
import math

import numpy as np

# digit -> skeletons; each a list of strokes; each stroke a list of (row, column) in 0..1
SKELETONS = {
    0: [
        [[(0.0, 0.55), (0.1, 0.2), (0.5, 0.0), (0.9, 0.25), (1.0, 0.6), (0.7, 1.0), (0.25, 0.95),
          (0.02, 0.6)]],
        [[(0.05, 0.4), (0.0, 0.8), (0.45, 1.0), (0.95, 0.75), (0.95, 0.2), (0.5, 0.0), (0.1, 0.2),
          (0.05, 0.45)]],
    ],
    1: [
        [[(0.0, 0.5), (1.0, 0.45)]],
        [[(0.25, 0.1), (0.0, 0.6), (0.0, 0.6), (1.0, 0.55)]],
        [[(0.2, 0.15), (0.0, 0.55), (0.0, 0.55), (1.0, 0.55)], [(1.0, 0.1), (1.0, 0.95)]],
    ],
    2: [
        [[(0.25, 0.0), (0.0, 0.5), (0.2, 1.0), (0.55, 0.7), (1.0, 0.0), (1.0, 0.0), (0.98, 1.0)]],
        [[(0.15, 0.05), (0.0, 0.6), (0.3, 0.95), (1.0, 0.05), (1.0, 0.05), (1.0, 1.0)]],
        [[(0.3, 0.05), (0.0, 0.45), (0.15, 0.95), (0.5, 0.6), (0.95, 0.1), (0.85, 0.0), (0.9, 0.3),
          (1.0, 1.0)]],
    ],
    3: [
        [[(0.1, 0.0), (0.0, 0.6), (0.25, 0.95), (0.48, 0.4), (0.5, 0.35), (0.6, 0.95),
          (0.95, 0.7), (0.9, 0.0)]],
        [[(0.0, 0.05), (0.0, 0.05), (0.0, 1.0), (0.0, 1.0), (0.4, 0.4), (0.55, 0.95), (0.95, 0.75),
          (0.9, 0.0)]],
    ],
    4: [
        [[(0.0, 0.45), (0.6, 0.0), (0.6, 0.0), (0.6, 1.0)], [(0.2, 0.75), (1.0, 0.7)]],
        [[(0.0, 0.15), (0.55, 0.05), (0.55, 0.05), (0.55, 1.0)], [(0.0, 0.75), (1.0, 0.75)]],
        [[(0.0, 0.7), (0.6, 0.0), (0.6, 0.0), (0.6, 1.0)], [(0.0, 0.75), (1.0, 0.75)]],
        [[(0.0, 0.1), (0.55, 0.1), (0.55, 0.1), (0.5, 0.9)], [(0.0, 0.85), (1.0, 0.8)]],
    ],
    5: [
        [[(0.0, 0.95), (0.0, 0.1), (0.0, 0.1), (0.45, 0.05), (0.35, 0.6), (0.6, 0.98),
          (0.95, 0.6), (0.85, 0.0)]],
        [[(0.0, 0.1), (0.45, 0.05), (0.35, 0.6), (0.6, 0.98), (0.95, 0.6), (0.85, 0.0)],
         [(0.0, 0.1), (0.0, 0.95)]],
    ],
    6: [
        [[(0.0, 0.8), (0.3, 0.2), (0.75, 0.0), (1.0, 0.5), (0.75, 1.0), (0.5, 0.6), (0.6, 0.05)]],
        [[(0.0, 0.6), (0.4, 0.05), (0.85, 0.1), (0.95, 0.75), (0.6, 0.95), (0.5, 0.3),
          (0.7, 0.05)]],
        [[(0.0, 0.9), (0.15, 0.4), (0.6, 0.0), (1.0, 0.35), (0.85, 0.95), (0.45, 0.85),
          (0.55, 0.1)]],
    ],
    7: [
        [[(0.0, 0.0), (0.0, 0.0), (0.0, 1.0), (0.0, 1.0), (1.0, 0.3)]],
        [[(0.0, 0.0), (0.0, 0.0), (0.0, 1.0), (0.0, 1.0), (0.5, 0.6), (1.0, 0.45)]],
        [[(0.0, 0.0), (0.0, 0.0), (0.0, 1.0), (0.0, 1.0), (1.0, 0.35)], [(0.5, 0.3), (0.5, 0.95)]],
        [[(0.15, 0.0), (0.0, 0.1), (0.0, 0.1), (0.0, 1.0), (0.0, 1.0), (1.0, 0.5)]],
    ],
    8: [
        [[(0.45, 0.5), (0.2, 0.95), (0.0, 0.5), (0.2, 0.05), (0.45, 0.5), (0.75, 0.98),
          (1.0, 0.5), (0.75, 0.02), (0.45, 0.5)]],
        [[(0.0, 0.55), (0.05, 0.1), (0.4, 0.2), (0.7, 0.95), (0.95, 0.6), (0.85, 0.1),
          (0.4, 0.85), (0.05, 0.8), (0.0, 0.5)]],
        [[(0.45, 0.5), (0.0, 0.95), (0.0, 0.05), (0.45, 0.5)],
         [(0.45, 0.5), (1.0, 1.0), (1.0, 0.0), (0.45, 0.5)]],
    ],
    9: [
        [[(0.1, 0.95), (0.0, 0.4), (0.25, 0.0), (0.45, 0.5), (0.2, 0.98), (0.2, 0.98),
          (1.0, 0.85)]],
        [[(0.2, 0.95), (0.0, 0.5), (0.2, 0.0), (0.45, 0.4), (0.3, 0.95)], [(0.05, 0.95),
                                                                         (1.0, 0.9)]],
        [[(0.15, 1.0), (0.0, 0.35), (0.35, 0.0), (0.45, 0.7), (0.15, 1.0), (0.15, 1.0),
          (0.6, 0.9), (1.0, 0.5)]],
    ],
}


def smooth(points, per_segment=6):
    """A Catmull-Rom curve through `points` (an (n, 2) array), `per_segment` points a segment."""
    p = np.asarray(points, float)
    if len(p) < 3:
        return p
    ends = np.vstack([p[:1], p, p[-1:]])
    out = [p[:1]]
    t = np.linspace(0, 1, per_segment + 1)[1:, None]
    for k in range(1, len(ends) - 2):
        p0, p1, p2, p3 = ends[k - 1], ends[k], ends[k + 1], ends[k + 2]
        out.append(0.5 * (2 * p1 + (p2 - p0) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t ** 2
                          + (3 * p1 - p0 - 3 * p2 + p3) * t ** 3))
    return np.vstack(out)


def drawing(skeleton, rng):
    """One drawing of `skeleton` on the 8 x 8 pad: strokes of (row, column) pointer positions."""
    wobble = rng.uniform(0.02, 0.07)
    aspect = rng.uniform(0.35, 0.95)          # width over height
    slant = rng.uniform(-0.35, 0.35)         # columns moved per row above the middle
    turn = math.radians(rng.uniform(-12, 12))
    height = rng.uniform(2.5, 7.6)
    cy, cx = rng.uniform(height / 2, 8 - height / 2), rng.uniform(1.5, 6.5)
    rotate = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    strokes = []
    for stroke in skeleton:
        p = np.array(stroke, float) + rng.normal(0, wobble, (len(stroke), 2))
        p = smooth(p) - 0.5
        p[:, 1] = p[:, 1] * aspect - slant * p[:, 0]
        p = p @ rotate.T * height + (cy, cx)
        p += rng.normal(0, 0.05, p.shape)     # the hand's tremble
        strokes.append([tuple(q) for q in np.clip(p, 0.05, 7.95)])
    return strokes


def pen_digits(per_digit, seed):
    """(images (10 * per_digit, 8, 8) on the 0..16 scale, labels): `per_digit` drawings of each
    digit, its skeletons taken in turn, as the page's pad prepares them for the model."""
    from training import ink_node
    rng = np.random.default_rng(seed)
    made, labels = [], []
    for digit, skeletons in SKELETONS.items():
        for k in range(per_digit):
            made.append(drawing(skeletons[k % len(skeletons)], rng))
            labels.append(digit)
    images = np.array(ink_node.pixels(made, "prepared"), float).reshape(-1, 8, 8)
    return images, np.array(labels)
