"""The numbers printed on heatmap cells meet WCAG 2.2 AA's contrast (1.4.3, 4.5:1 for text)
on every colour of every colour scale: web/js/heatmap/contrast.js's choice of ink, run in Node, checked
against the contrast ratio computed here from WCAG's definitions."""
import json
import os
import re
import subprocess

import pytest

from buildtools.onefile.page import page_stylesheets
from training.ink_node import node

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STYLE = os.path.join(ROOT, "web", "js", "heatmap", "style.js")
CONTRAST = os.path.join(ROOT, "web", "js", "heatmap", "contrast.js")


def scales():
    """{name: [(at, (r, g, b)), ...]}: the page's colour scales, read from heatmap/style.js."""
    text = open(STYLE, encoding="utf-8").read()
    out = {}
    for name in ("DIVERGING", "SEQUENTIAL"):
        body = re.search(r"export const %s = \[(.*?)\];" % name, text, re.S).group(1)
        out[name] = [(float(at), tuple(int(h[i:i + 2], 16) for i in (0, 2, 4)))
                     for at, h in re.findall(r'\[([\d.]+), "#([0-9a-f]{6})"\]', body)]
    return out


def colours(stops, n=1024):
    """Every colour of a scale interpolated linearly in RGB at n evenly spaced places, rounded
    as the page's colour table rounds them (the table has fewer)."""
    out = set()
    for k in range(n):
        f = k / (n - 1)
        s = 0
        while s < len(stops) - 2 and f > stops[s + 1][0]:
            s += 1
        (a0, c0), (a1, c1) = stops[s], stops[s + 1]
        w = (f - a0) / (a1 - a0) if a1 > a0 else 0.0
        out.add(tuple(int(c0[ch] + (c1[ch] - c0[ch]) * w + 0.5) for ch in range(3)))
    return sorted(out)


def luminance(rgb):
    lin = [v / 255 / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4
           for v in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def ratio(a, b):
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def inks(rgbs):
    script = """
import { readFileSync } from "node:fs";
import { cellInk } from %s;
const rgbs = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(rgbs.map(([r, g, b]) => cellInk(r, g, b))));
""" % json.dumps("file://" + CONTRAST)
    out = subprocess.run([node(), "--input-type=module", "-e", script], input=json.dumps(rgbs),
                         capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", ["DIVERGING", "SEQUENTIAL"])
def test_every_cell_colour_gets_ink_of_at_least_4_5_to_1(name):
    rgbs = colours(scales()[name])
    assert len(rgbs) > 200
    worst = min((ratio(tuple(int(ink[i] * 2, 16) for i in (1, 2, 3)), rgb), rgb, ink)
                for rgb, ink in zip(rgbs, inks(rgbs)))
    assert worst[0] >= 4.5, worst
    print("\n%s: %d colours, the lowest contrast %.2f:1 (%s on rgb%s)" % (
        name, len(rgbs), worst[0], worst[2], worst[1]))


def test_the_ink_is_the_better_of_black_and_white():
    # the cells: logits[0,0] of the worked example, and white on #63a5cd (2.69:1)
    for rgb, want in (((0x63, 0xa5, 0xcd), "#000"), ((0x21, 0x66, 0xac), "#fff"),
                      ((0xf7, 0xf7, 0xf7), "#000"), ((0xb2, 0x18, 0x2b), "#fff")):
        assert inks([list(rgb)]) == [want]
        assert ratio((0, 0, 0) if want == "#000" else (255, 255, 255), rgb) >= 4.5


def outlines():
    """{name: (line, halo)}: the outlines laid over heatmaps (web/js/heatmap/shapes.js)."""
    text = open(os.path.join(ROOT, "web", "js", "heatmap", "shapes.js"), encoding="utf-8").read()
    body = re.search(r"export const OUTLINES = \{(.*?)\};", text, re.S).group(1)
    rgb = lambda h: tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))  # noqa: E731
    return {name: (rgb(line), rgb(halo)) for name, line, halo in re.findall(
        r'(\w+): \{ line: "#([0-9a-f]{6})", halo: "#([0-9a-f]{6})" \}', body)}


def test_every_outline_shows_on_every_colour_of_every_scale():
    """WCAG 1.4.11 (non-text contrast, 3:1): an outline (a predicted class, the logit pointed
    at, a walk-through step's cells) is a line over a contrasting halo; over each colour a cell
    can have, one of the two has at least 3:1, and the two have 3:1 between them."""
    found = outlines()
    assert sorted(found) == ["linked", "mark", "walk"]
    everything = set(c for stops in scales().values() for c in colours(stops))
    for name, (line, halo) in found.items():
        assert ratio(line, halo) >= 3, name
        worst = min(everything, key=lambda c: max(ratio(line, c), ratio(halo, c)))
        assert max(ratio(line, worst), ratio(halo, worst)) >= 3, (name, worst)


def test_the_editable_cells_borders_show_in_both_schemes():
    """WCAG 1.4.11: an editable cell is seen to be one by its borders (3:1 against the cells'
    backgrounds: a plain cell, a CLS row, a cell being typed in), in light and dark mode."""
    index = open(os.path.join(ROOT, "web", "index.html"), encoding="utf-8").read()
    css = "\n".join(open(os.path.join(ROOT, "web", *path.split("/")), encoding="utf-8").read()
                    for path in page_stylesheets(index))
    dark_at = css.index("@media (prefers-color-scheme: dark)")
    rgb = lambda h: tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))  # noqa: E731
    for scheme, text in (("light", css[:dark_at]), ("dark", css[dark_at:css.index("}", dark_at)])):
        var = dict(re.findall(r"--([\w-]+): #([0-9a-f]{6})", text))
        for background in ("paper", "cls", "pending"):
            assert ratio(rgb(var["grid-line"]), rgb(var[background])) >= 3, (scheme, background)
    assert css.count("solid var(--grid-line)") == 3  # the cells' right and bottom, the grid's box
