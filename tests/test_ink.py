"""The drawing pad's ink (web/js/digits/ink.js, run in Node through training/ink_node.py): what a pen
drawing becomes, checked against the rules written out here, and how often the tiny ViT reads
drawn digits right (tests/browser/handwriting.py's three writing styles, drawn in the pad's middle
or anywhere on it, small or slanted), as drawn and as prepared for the model."""
import math
import os
import sys

import numpy as np
import pytest

from training import ink_node
from pycore import load_tiny_vit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser"))
import handwriting  # noqa: E402  (a plain module of tests/browser, no browser needed)

PEN, FINE, SIDE = 2.33, 4, 8    # the pad's pen: radius in bitmap points, points per pixel
BOX_HEIGHT, BOX_WIDTH, MARGIN = 8.0, 6.0, 0.3


def drawn(strokes):
    """The pad's 8 x 8 pixels: every bitmap point (centre at +0.5) within PEN of a pen position,
    the positions taken a bitmap point apart along each segment; counted in 4 x 4 blocks."""
    side = SIDE * FINE
    bitmap = np.zeros((side, side), int)
    centres = (np.arange(side) + 0.5)

    def ink(y, x):
        d = np.hypot(centres[:, None] - y * FINE, centres[None, :] - x * FINE)
        bitmap[d <= PEN] = 1
    for stroke in strokes:
        ink(*stroke[0])
        for (y0, x0), (y1, x1) in zip(stroke, stroke[1:]):
            n = max(1, math.ceil(math.hypot(y1 - y0, x1 - x0) * FINE))
            for s in range(1, n + 1):
                ink(y0 + (y1 - y0) * s / n, x0 + (x1 - x0) * s / n)
    return bitmap.reshape(SIDE, FINE, SIDE, FINE).sum(axis=(1, 3)).ravel().tolist()


def fitted(strokes):
    """Scaled so the height (at least one pixel) fills BOX_HEIGHT less two margins, the width as
    much up to BOX_WIDTH less two margins, the bounding box's centre moved to (4, 4)."""
    p = np.array([q for s in strokes for q in s], float)
    (y0, x0), (y1, x1) = p.min(axis=0), p.max(axis=0)
    sy = (BOX_HEIGHT - 2 * MARGIN) / max(y1 - y0, 1.0)
    sx = min(BOX_WIDTH - 2 * MARGIN, (x1 - x0) * sy) / (x1 - x0) if x1 - x0 > 1e-9 else sy
    return [[(4 + (y - (y0 + y1) / 2) * sy, 4 + (x - (x0 + x1) / 2) * sx) for y, x in s]
            for s in strokes]


def test_the_pads_ink_is_the_pen_written_out_here():
    drawings = [d for ds, _ in handwriting.drawing_sets(2, seed=5).values() for d in ds]
    assert ink_node.pixels(drawings, "rasterize") == [drawn(d) for d in drawings]


def test_a_pen_drawing_reaches_the_model_fitted_to_the_data_sets_box():
    drawings = [d for ds, _ in handwriting.drawing_sets(2, seed=6).values() for d in ds]
    prepared = ink_node.pixels(drawings, "prepared")
    assert prepared == [drawn(fitted(d)) for d in drawings]
    for pixels in prepared:  # the data set's digits span all 8 rows
        image = np.array(pixels).reshape(SIDE, SIDE)
        assert image.any(axis=1).all() and 0 < image.max() <= 16


def test_where_and_how_large_a_digit_is_drawn_changes_nothing_the_model_reads():
    seven = handwriting.drawings(7, 1, seed=27)[0]
    moved = [[(y + 0.8, x - 1.3) for y, x in s] for s in seven]
    small = [[(2 + (y - 4) * 0.5, 5 + (x - 4) * 0.5) for y, x in s] for s in seven]
    a, b, c = ink_node.pixels([seven, moved, small], "prepared")
    assert a == b
    assert np.abs(np.array(a) - np.array(c)).max() <= 1  # the same but for rounding at the edges
    assert ink_node.pixels([[]], "prepared") == [[0] * 64]


def test_drawn_digits_are_read_right_at_least_95_percent_of_the_time():
    """Measured, not trained on: 20 drawings of each digit in each style and place (1,200 in
    all); the model was trained on training/pen_digits.py's drawings, another set of shapes."""
    model = load_tiny_vit()
    rows, right = [], {"rasterize": 0, "prepared": 0}
    total = 0
    for (style, where), (drawings, labels) in handwriting.drawing_sets(20, seed=27).items():
        line = []
        for fn in ("rasterize", "prepared"):
            images = np.array(ink_node.pixels(drawings, fn), float).reshape(-1, SIDE, SIDE)
            read = model.predict(images) == labels
            right[fn] += int(read.sum())
            line.append("%s %.0f%% (%s)" % ("as drawn" if fn == "rasterize" else "prepared",
                                            100 * read.mean(), " ".join(
                "%d:%d" % (d, read[labels == d].sum()) for d in range(10))))
        total += len(labels)
        rows.append("%-8s %-9s %s" % (style, where, " | ".join(line)))
    print("\ndrawn digits read right (of 20 each):\n" + "\n".join(rows))
    as_drawn, prepared = right["rasterize"] / total, right["prepared"] / total
    print("overall: as drawn %.1f%%, prepared %.1f%%" % (100 * as_drawn, 100 * prepared))
    assert prepared >= 0.95 and prepared >= as_drawn + 0.2, (as_drawn, prepared)


@pytest.mark.parametrize("fn", ["rasterize", "prepared"])
def test_a_stroke_off_the_pad_inks_only_the_pad(fn):
    (pixels,) = ink_node.pixels([[[(-3.0, -3.0), (11.0, 11.0)]]], fn)
    assert len(pixels) == 64 and max(pixels) <= 16 and sum(pixels) > 0


def test_the_training_pen_digits_are_what_the_pad_would_send():
    """training/pen_digits.py's drawings, as the model was trained on them: prepared by the
    pad's own ink code (each spans the 8 rows, 0..16), every digit alike, the same per seed."""
    from training import pen_digits
    images, labels = pen_digits.pen_digits(3, seed=4)
    assert images.shape == (30, SIDE, SIDE) and labels.tolist() == sorted(list(range(10)) * 3)
    assert (images.max(axis=(1, 2)) <= 16).all() and (images.min() >= 0)
    assert images.any(axis=2).all()  # ink in every row of every image
    again, _ = pen_digits.pen_digits(3, seed=4)
    assert np.array_equal(images, again)
    rng = np.random.default_rng(4)
    first = pen_digits.drawing(pen_digits.SKELETONS[0][0], rng)
    assert ink_node.pixels([first], "prepared")[0] == images[0].ravel().astype(int).tolist()
