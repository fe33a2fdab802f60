"""Digits 0-9 as a person draws them with a mouse on the 8 x 8 pad: strokes through points in
pixels of the pad (row, column; 0..8), in three writing styles (STYLES): "upright", the shapes
of ordinary handwriting (tall, narrow digits: a "7" without a bar, a "4" open at the top, a "1"
with a flag), and "second", other common ways (a plain "1", a closed "4", a "7" with a bar, an
"8" of two loops, a "5" whose bar comes last...). Each drawing is moved, scaled, turned and
shaken a little, as no two hands draw alike; "anywhere" drawings are also small (40-70 % of the
pad) and placed off the middle, or slanted.

Used by tests/browser/test_page_drawing.py, which draws them with the mouse's own events, and
by tests/test_ink.py, which draws them through the pad's own ink code (web/js/digits/ink.js) in Node."""
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


# the same digits written another common way
SECOND = {
    0: [arc(4.0, 4.0, 3.2, 1.7, 90, -270, 28)],
    1: [[(0.8, 4.0), (7.2, 4.0)]],
    2: [[(1.6, 2.0), (0.9, 3.6), (1.3, 5.4), (2.8, 5.6), (7.1, 2.0), (7.1, 6.0)]],
    3: [[(1.0, 2.2), (1.0, 5.6), (3.6, 3.4)] + arc(5.2, 3.8, 1.9, 2.2, 100, -150, 14)],
    4: [[(0.8, 4.2), (4.6, 1.6), (4.6, 6.4)], [(0.8, 5.0), (7.2, 5.0)]],
    5: [[(1.0, 2.6), (3.4, 2.3)] + arc(5.1, 3.8, 1.9, 2.3, 120, -150, 14), [(1.0, 2.6), (1.0, 6.0)]],
    6: [[(0.8, 5.2), (3.2, 2.6), (5.6, 2.2)] + arc(5.4, 4.0, 1.6, 1.8, 190, -170, 20)],
    7: [[(1.0, 1.8), (1.0, 6.0), (7.2, 3.4)], [(4.0, 2.6), (4.0, 5.6)]],
    8: [arc(2.3, 4.0, 1.4, 1.5, 270, -90, 16), arc(5.6, 4.0, 1.7, 1.9, 90, 450, 18)],
    9: [arc(2.4, 4.0, 1.5, 1.8, 0, 360, 20), [(2.4, 5.8), (7.2, 5.6)]],
}

# a third hand, written after the model was trained on training/pen_digits.py's shapes and kept
# out of every decision about them: a "0" left open at the top, a "2" with a loop, a "3" of two
# strokes meeting in a point, a "4" in one stroke, a "6" with a wide loop, a "7" whose bar starts
# with a tick, a "9" whose tail curls to the left
THIRD = {
    0: [arc(4.1, 4.0, 3.0, 2.2, 75, 420, 26)],
    1: [[(1.8, 3.0), (0.9, 4.1), (3.0, 3.9), (7.2, 3.6)]],
    2: [arc(2.6, 4.0, 1.7, 2.2, 170, -20, 10) + [(6.0, 2.4), (6.8, 1.7), (6.5, 2.6), (6.9, 4.5),
                                                 (6.6, 6.2)]],
    3: [arc(2.5, 4.0, 1.5, 2.2, 160, -80, 10) + [(4.0, 3.2)],
        [(4.0, 3.2)] + arc(5.4, 4.0, 1.7, 2.4, 80, -160, 12)],
    4: [[(0.9, 2.6), (4.8, 2.0), (4.9, 6.4), (4.7, 5.2), (0.9, 5.2), (7.2, 5.0)]],
    5: [[(1.0, 2.3), (1.0, 6.0)], [(1.0, 2.5), (3.8, 2.2)] + arc(5.2, 3.9, 1.8, 2.2, 110, -160, 14)],
    6: [[(0.8, 5.6), (2.2, 3.2)] + arc(5.0, 4.0, 2.1, 2.3, 180, -175, 22)],
    7: [[(1.8, 1.6), (1.0, 2.0), (1.0, 6.0), (4.0, 4.6), (7.2, 3.6)]],
    8: [[(1.4, 5.6), (0.8, 4.0), (1.6, 2.4), (3.0, 2.8), (4.2, 4.4), (5.6, 5.8), (6.8, 4.2),
         (6.0, 2.4), (4.8, 2.8), (3.4, 4.6), (2.2, 5.4), (1.4, 5.6)]],
    9: [arc(2.6, 4.1, 1.6, 1.9, 10, 370, 20) + [(5.2, 5.8), (6.8, 5.0), (7.1, 3.4), (6.4, 2.4)]],
}
STYLES = {"upright": DIGITS, "second": SECOND, "third": THIRD}


def drawings(digit, count, seed, style="upright", anywhere=False):
    """`count` drawings of `digit` in `style`, each its strokes scaled by 0.85-1.05, turned by up
    to 8 degrees, moved by up to 0.4 pixels about the pad's middle, every point shaken by 0.12
    pixels (standard deviation); kept inside the pad. `anywhere`: every other drawing scaled by
    0.4-0.7 and moved by up to 2 pixels, the others slanted by up to 0.35 pixels a row."""
    rng = np.random.default_rng([seed, digit] + ([7, len(style)] if style != "upright" or
                                                  anywhere else []))
    out = []
    for k in range(count):
        scale = rng.uniform(0.85, 1.05)
        turn = math.radians(rng.uniform(-8, 8))
        shift = rng.uniform(-0.4, 0.4, 2)
        slant = 0.0
        if anywhere and k % 2 == 0:
            scale, shift = rng.uniform(0.4, 0.7), rng.uniform(-2.0, 2.0, 2)
        elif anywhere:
            slant = rng.uniform(-0.35, 0.35)
        rotate = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
        strokes = []
        for stroke in STYLES[style][digit]:
            p = np.array(stroke, dtype=float)
            p[:, 1] += slant * (4.0 - p[:, 0])
            p = (p - 4.0) @ rotate.T * scale + 4.0 + shift
            p += rng.normal(0, 0.12, p.shape)
            strokes.append([tuple(q) for q in np.clip(p, 0.05, 7.95)])
        out.append(strokes)
    return out


def drawing_sets(per_digit, seed):
    """{(style, place): (drawings, labels)}: `per_digit` drawings of each digit in each style,
    in the pad's middle ("middle") and anywhere on it ("anywhere")."""
    out = {}
    for style in STYLES:
        for anywhere in (False, True):
            made, labels = [], []
            for digit in range(10):
                made += drawings(digit, per_digit, seed, style, anywhere)
                labels += [digit] * per_digit
            out[style, "anywhere" if anywhere else "middle"] = (made, np.array(labels))
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

