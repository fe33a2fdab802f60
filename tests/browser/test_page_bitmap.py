"""A big matrix (the ViT-B/16 preset's W_head, 768 x 1000) is drawn as a bitmap under Plotly's
axes (js/heatmap/draw.js). What is checked here is what is on the screen: the colours of the cells in
a screenshot, after a zoom dragged with the mouse, after an edit typed key by key and after a
resize, against colours computed here from the page's colour scale; the value a hover shows; and
that a small matrix afterwards is painted the same way.
"""
import base64

import numpy as np
import pytest

from pycore.explorer import preset

from .engines.kit import rgb
from .test_page_numbers import short
from .pagekit import act, heatmap_z, open_explorer, renders, set_viewport

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

# The page's diverging scale (ColorBrewer RdBu, 7 classes), blended linearly in RGB between stops.
RDBU = [(0.0, "#2166ac"), (0.2, "#4393c3"), (0.4, "#d1e5f0"), (0.5, "#f7f7f7"),
        (0.6, "#fddbc7"), (0.8, "#d6604d"), (1.0, "#b2182b")]
# The page looks colours up in a 512-entry table: at most half a step off the exact blend.
TOLERANCE = 3


def rdbu(value, zmin, zmax):
    f = min(max((value - zmin) / (zmax - zmin), 0.0), 1.0)
    for (a0, h0), (a1, h1) in zip(RDBU, RDBU[1:]):
        if f <= a1:
            c0, c1 = np.array(rgb(h0), float), np.array(rgb(h1), float)
            return c0 + (c1 - c0) * (f - a0) / (a1 - a0)
    raise AssertionError("unreachable")


def plot_area(page, element_id):
    """The plot area's box on screen (CSS pixels) and the axes' ranges Plotly shows."""
    return page.evaluate("""id => {
        const el = document.getElementById(id);
        const r = el.querySelector('.nsewdrag').getBoundingClientRect();
        return {x: r.left, y: r.top, w: r.width, h: r.height,
                xr: el._fullLayout.xaxis.range.slice(), yr: el._fullLayout.yaxis.range.slice()};
    }""", element_id)


def bitmap_box(page, element_id):
    return page.evaluate("""id => {
        const v = document.getElementById(id).parentElement.querySelector('canvas.heatmap-bitmap');
        if (!v) return null;
        const r = v.getBoundingClientRect();
        return {x: r.left, y: r.top, w: r.width, h: r.height};
    }""", element_id)


def screen_pixels(page, box, points):
    """The RGB colours on screen at `points` (page x, y), from a screenshot of `box`."""
    png = page.screenshot(clip={"x": box["x"], "y": box["y"], "width": box["w"], "height": box["h"]})
    return np.array(page.evaluate("""async ([b64, points]) => {
        const img = new Image();
        img.src = 'data:image/png;base64,' + b64;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.width; c.height = img.height;
        const ctx = c.getContext('2d');
        ctx.drawImage(img, 0, 0);
        return points.map(([x, y]) => Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3)));
    }""", [base64.b64encode(png).decode(), [[int(x - box["x"]), int(y - box["y"])] for x, y in points]]),
        dtype=float)


def cells_in_view(area, inset=0.0):
    """The whole cells in view, with a screen point in each: its centre, or `inset` of a cell
    towards its top-left corner (away from the number printed at its centre)."""
    (x0, x1), (y_bottom, y_top) = area["xr"], area["yr"]  # the y axis is reversed
    cols = range(int(np.ceil(min(x0, x1) + 0.5)), int(np.floor(max(x0, x1) - 0.5)) + 1)
    rows = range(int(np.ceil(min(y_top, y_bottom) + 0.5)), int(np.floor(max(y_top, y_bottom) - 0.5)) + 1)
    for r in rows:
        for c in cols:
            yield r, c, (area["x"] + (c - inset - x0) / (x1 - x0) * area["w"],
                         area["y"] + (r - inset - y_top) / (y_bottom - y_top) * area["h"])


def under_shapes(page, element_id, area, points):
    """Which screen points an outline drawn over the heatmap covers (within its line's half
    width + 2 px of an edge, or inside it if it is filled): those are not the bitmap's."""
    shapes = page.evaluate("""id => (document.getElementById(id).layout.shapes || []).map(s => ({
        x0: s.x0, x1: s.x1, y0: s.y0, y1: s.y1, width: (s.line || {}).width || 0,
        filled: Boolean(s.fillcolor) && !/,\\s*0\\)$/.test(s.fillcolor)}))""", element_id)
    (x0, x1), (y_bottom, y_top) = area["xr"], area["yr"]

    def screen(x, y):
        return (area["x"] + (x - x0) / (x1 - x0) * area["w"],
                area["y"] + (y - y_top) / (y_bottom - y_top) * area["h"])
    covered = set()
    for k, (px, py) in enumerate(points):
        for s in shapes:
            (ax, ay), (bx, by) = screen(s["x0"], s["y0"]), screen(s["x1"], s["y1"])
            left, right, top, bottom = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
            near = s["width"] / 2 + 2
            inside_x, inside_y = left - near <= px <= right + near, top - near <= py <= bottom + near
            on_edge = ((inside_y and min(abs(px - left), abs(px - right)) <= near) or
                       (inside_x and min(abs(py - top), abs(py - bottom)) <= near))
            if on_edge or (s["filled"] and left <= px <= right and top <= py <= bottom):
                covered.add(k)
    return covered


def assert_screen_shows(page, element_id, W, must_see=None, inset=0.0):
    area = plot_area(page, element_id)
    zmin, zmax = page.evaluate("id => { const d = document.getElementById(id).data[0];"
                               " return [d.zmin, d.zmax]; }", element_id)
    cells = list(cells_in_view(area, inset))
    covered = under_shapes(page, element_id, area, [p for _, _, p in cells])
    cells = [cell for k, cell in enumerate(cells) if k not in covered]
    assert len(cells) >= 4, "too few whole cells in view: %r" % area
    if must_see is not None:
        assert must_see in [(r, c) for r, c, _ in cells], "%r is not in view, or under an outline" % (must_see,)
    shown = screen_pixels(page, area, [p for _, _, p in cells])
    want = np.array([rdbu(W[r, c], zmin, zmax) for r, c, _ in cells])
    worst = np.abs(shown - want).max(axis=1)
    bad = [(r, c, list(shown[k]), list(want[k].round())) for k, (r, c, _) in enumerate(cells)
           if worst[k] > TOLERANCE]
    assert not bad, "cells shown in the wrong colour (row, col, shown, expected): %r" % bad[:5]
    return area


def assert_bitmap_over_plot_area(page, element_id):
    area, view = plot_area(page, element_id), bitmap_box(page, element_id)
    assert view is not None, "no bitmap canvas"
    for k in "xywh":
        assert abs(view[k] - area[k]) <= 1, (k, view, area)


def drag_zoom(page, element_id, frm, to):
    """Drag a zoom box with the mouse, from and to fractions of the plot area."""
    area = plot_area(page, element_id)
    before = renders(page)
    page.mouse.move(area["x"] + frm[0] * area["w"], area["y"] + frm[1] * area["h"])
    page.mouse.down()
    page.mouse.move(area["x"] + to[0] * area["w"], area["y"] + to[1] * area["h"], steps=8)
    page.mouse.up()
    page.wait_for_function("([id, r]) => document.getElementById(id)._fullLayout.xaxis.range[0] !== r",
                           arg=[element_id, area["xr"][0]])
    assert renders(page) == before  # a zoom is the page's, not Python's


def test_a_big_matrix_is_shown_cell_by_cell_through_zoom_edit_hover_and_resize(page, site_url):
    set_viewport(page, {"width": 1280, "height": 900})
    open_explorer(page, site_url)
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    state = preset("vit-b16")
    W = state.W_head.copy()
    assert page.get_attribute("#heatmap-w", "data-bitmap") == "true"
    page.locator("#heatmap-w").scroll_into_view_if_needed()
    assert_bitmap_over_plot_area(page, "heatmap-w")

    # Zoom in twice, as a person does, to the top-left corner: cells become big squares. Each
    # box at least 20 px each way, the least Plotly takes for a zoom of both axes (from 1200 px
    # the figure has about a quarter of the row: its plot area about 220 px wide).
    drag_zoom(page, "heatmap-w", (0.002, 0.003), (0.12, 0.12))
    drag_zoom(page, "heatmap-w", (0.01, 0.01), (0.15, 0.3))
    area = assert_screen_shows(page, "heatmap-w", W)
    assert_bitmap_over_plot_area(page, "heatmap-w")
    assert abs(area["xr"][1] - area["xr"][0]) < 20  # zoomed: under 20 columns in view

    # Type a new value key by key into a cell in view: its colour changes, the zoom stays.
    r, c = next((r, c) for r, c, _ in cells_in_view(area) if r >= 1 and c >= 1)
    # near the colour scale's end opposite the cell's own sign: a change one can see
    new = -0.9 * abs(page.evaluate("document.getElementById('heatmap-w').data[0].zmin")) * (
        1.0 if W[r, c] >= 0 else -1.0)
    text = "%.6f" % new
    cell = page.get_by_label("W_head[%d,%d]" % (r, c), exact=True)
    cell.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(text, delay=20)
    page.keyboard.press("Enter")
    # Each key that leaves a number (-0.0, -0.05, ...) is drawn as it comes, and the last one's
    # answer may come after Enter: wait until the typed number is drawn (or time out).
    page.wait_for_function("([r, c, v]) => document.getElementById('heatmap-w').data[0].z[r][c] === v",
                           arg=[r, c, float(text)])
    W[r, c] = float(text)
    shown = heatmap_z(page, "heatmap-w")
    assert shown[r, c] == W[r, c]
    # the preset's other values, drawn in the page's NumPy: equal up to its last bit or so
    np.testing.assert_allclose(shown, W, rtol=1e-13, atol=0)
    assert_bitmap_over_plot_area(page, "heatmap-w")
    # Enter moved the focus, and its outline, to the cell below: each cell is read a quarter of
    # a cell up and left of its centre, clear of that outline's edge and its halo (a zoomed row
    # is only some pixels tall, and the centre lay within them)
    after = assert_screen_shows(page, "heatmap-w", W, must_see=(r, c), inset=0.25)
    assert after["xr"] == area["xr"] and after["yr"] == area["yr"]
    zmin, zmax = page.evaluate("() => { const d = document.getElementById('heatmap-w').data[0];"
                               " return [d.zmin, d.zmax]; }")
    assert np.abs(rdbu(W[r, c], zmin, zmax) - rdbu(state.W_head[r, c], zmin, zmax)).max() > 40  # visible

    # Hovering the cell shows its value in the page's short form (js/page/numbers.js; the exact one is
    # in the focused cell and the exports).
    (_, _, point), = [(rr, cc, p) for rr, cc, p in cells_in_view(after) if (rr, cc) == (r, c)]
    page.mouse.move(*point)
    label = page.locator("#heatmap-w").locator("xpath=..").locator(".hover-value")
    label.wait_for(state="visible")
    assert "W = " + short(float(text)) in label.inner_text()
    assert "%d" % c in label.inner_text() and "%d" % r in label.inner_text()

    page.mouse.move(1, 1)
    label.wait_for(state="hidden")

    # A narrower window: the plot is laid out again, and the bitmap with it.
    set_viewport(page, {"width": 900, "height": 900})
    page.wait_for_function("w => Math.abs(document.getElementById('heatmap-w').querySelector('.nsewdrag')"
                           ".getBoundingClientRect().width - w) > 20", arg=after["w"])
    page.wait_for_function("""() => {
        const el = document.getElementById('heatmap-w');
        const a = el.querySelector('.nsewdrag').getBoundingClientRect();
        const v = el.parentElement.querySelector('canvas.heatmap-bitmap').getBoundingClientRect();
        return Math.abs(a.width - v.width) <= 1 && Math.abs(a.left - v.left) <= 1;
    }""")
    page.locator("#heatmap-w").scroll_into_view_if_needed()
    assert_bitmap_over_plot_area(page, "heatmap-w")
    assert_screen_shows(page, "heatmap-w", W)

    # Back to the worked example: its 4 x 3 W_head is painted the same way, cell by cell, with
    # each cell's number printed at its centre (the colours are read away from it).
    page.select_option("#preset", "worked")
    act(page, lambda: page.click("#load-preset"))
    page.locator("#heatmap-w").scroll_into_view_if_needed()
    assert_bitmap_over_plot_area(page, "heatmap-w")
    assert_screen_shows(page, "heatmap-w", preset("worked").W_head, inset=0.3)
