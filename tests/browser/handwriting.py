"""Digits 0-9 as a person draws them with a mouse on the 8 x 8 pad: strokes through points in
pixels of the pad (row, column; 0..8), in the shapes of ordinary handwriting (the data set's
tall, narrow digits: a "7" without a bar, a "4" open at the top, a "1" with a flag), and each
drawing moved, scaled, turned and shaken a little, as no two hands draw alike.

Used by tests/browser/test_page_drawing.py, which draws them with the mouse's own events."""
import math

import numpy as np


def arc(cy, cx, ry, rx, start, end, n):
    """Points on an ellipse from angle `start` to `end` (degrees, counter-clockwise on screen)."""
    return [(cy - ry * math.sin(math.radians(a)), cx + rx * math.cos(math.radians(a)))
            for a in np.linspace(start, end, n)]


# digit -> its strokes (each a list of points, drawn with the button held down)
DIGITS = {
    0: [arc(4.0, 3.9, 3.1, 2.0, 100, 460, 28)],
    1: [[(1.6, 3.2), (0.8, 4.4), (7.2, 4.2)]],
    2: [arc(2.7, 4.0, 1.8, 2.1, 160, -30, 12) + [(7.0, 1.8), (7.0, 6.3)]],
    3: [arc(2.4, 3.9, 1.5, 2.0, 150, -90, 12) + arc(5.3, 3.9, 1.8, 2.3, 90, -150, 14)],
    4: [[(0.8, 4.6), (5.0, 1.5), (5.0, 6.6)], [(2.6, 5.0), (7.2, 5.0)]],
    5: [[(1.0, 6.0), (1.0, 2.4), (3.6, 2.2)] + arc(5.0, 3.9, 2.0, 2.3, 120, -140, 14)],
    6: [[(0.8, 4.8), (1.6, 3.6), (3.0, 2.6)] + arc(5.4, 3.9, 1.6, 1.7, 180, -180, 20)],
    7: [[(1.0, 1.8), (1.0, 5.8), (7.2, 3.2)]],
    8: [[(3.8, 3.9), (2.9, 5.3), (1.8, 5.4), (0.9, 3.9), (1.8, 2.4), (2.9, 2.5), (3.8, 3.9),
         (5.0, 5.4), (6.2, 5.4), (7.1, 3.9), (6.2, 2.4), (5.0, 2.4), (3.8, 3.9)]],
    9: [arc(2.5, 3.9, 1.6, 1.8, -10, 350, 20) + [(4.4, 5.6), (7.2, 5.0)]],
}


def drawings(digit, count, seed):
    """`count` drawings of `digit`, each its strokes scaled by 0.85-1.05, turned by up to 8
    degrees, moved by up to 0.4 pixels about the pad's middle, every point shaken by 0.12
    pixels (standard deviation); kept inside the pad."""
    rng = np.random.default_rng([seed, digit])
    out = []
    for _ in range(count):
        scale = rng.uniform(0.85, 1.05)
        turn = math.radians(rng.uniform(-8, 8))
        shift = rng.uniform(-0.4, 0.4, 2)
        rotate = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
        strokes = []
        for stroke in DIGITS[digit]:
            p = (np.array(stroke) - 4.0) @ rotate.T * scale + 4.0 + shift
            p += rng.normal(0, 0.12, p.shape)
            strokes.append([tuple(q) for q in np.clip(p, 0.05, 7.95)])
        out.append(strokes)
    return out


def draw(page, strokes, steps=3):
    """Draw `strokes` on the pad with the mouse: press at each stroke's first point, move through
    the others (`steps` pointer moves between two points), release."""
    pad = page.locator("#digit-pad")
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    cell = box["width"] / 8
    for stroke in strokes:
        (y, x), rest = stroke[0], stroke[1:]
        page.mouse.move(box["x"] + x * cell, box["y"] + y * cell)
        page.mouse.down()
        for y, x in rest:
            page.mouse.move(box["x"] + x * cell, box["y"] + y * cell, steps=steps)
        page.mouse.up()
