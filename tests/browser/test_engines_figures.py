"""The page in three engines on both hosts (test_engines.py says how): the comparisons' figures
made ahead, the layout at desktop, projector and phone sizes, a heatmap saved for slides, and
the heatmaps' cells where the bitmap puts them."""
import base64

import numpy as np
import pytest

from .engines.app import (AXES, BEYOND_CHROMIUM, CLS, FITS, PAGE, SHOWN, TITLES, UNSEEN, W, choose,
                          head, layout_settled, numbers_in, settle_layout, settled, shown_numbers,
                          text_size)
from .engines.kit import edit, heatmap_z, renders, wait_render_after
from .engines import EngineError
from .figure_files import png_looks, png_size, svg_figure
from .pagekit import STEP_REVEALED
from .pdf_pages import BACK_ON_SCREEN, PIPELINE_TITLES, PRINT_LAYOUT, PdfReader, handout_problems

pytestmark = [pytest.mark.browser]


@PAGE
def test_figures_made_ahead_show_the_first_choice_and_the_next(app):
    """The figures Python shows only on a choice are made ahead, hidden, once Python's warm-up is
    over (js/app.js: figuresAhead): the first mistake chosen, and the same mistake after none, show its
    numbers, title, key, painted cells and numbers table; one chosen after the text size changed
    while hidden is drawn in the new size; the encoder output, made as Python described it, shows
    the seeded tokens when a mistake needs them."""
    engine = app.start()
    engine.wait_for("() => document.documentElement.dataset.ahead === 'done'", timeout=90)
    ahead = engine.evaluate("async () => (await import('./js/app.js')).figuresAhead().map(([id]) => id)")
    assert "heatmap-mistake" in ahead and "heatmap-encoder" in ahead, ahead
    made = engine.evaluate("""(ids) => ids.map((id) => { const el = document.getElementById(id);
        return Boolean(el._fullLayout) && !el.data; })""", ahead)
    assert made == [True] * len(ahead)
    assert engine.evaluate(UNSEEN, ahead) == [True] * len(ahead)
    _, logits = head(CLS, W)
    skipped = CLS @ W
    expected = {"heatmap-mistake-correct": logits, "heatmap-mistake": skipped,
                "heatmap-mistake-diff": skipped - logits}
    for turn in ("made ahead", "hidden and chosen again"):
        choose(engine, "mistake", "no_layernorm")
        for figure, z in expected.items():
            np.testing.assert_allclose(heatmap_z(engine, figure), z, rtol=0, atol=1e-12)
            got = engine.evaluate(SHOWN, figure)
            assert got["key"] and got["painted"] and got["numberInCell"], (turn, figure, got)
            np.testing.assert_allclose(shown_numbers(got["table"]), z, rtol=0, atol=5.01e-5)
            assert got["hover"] and any(abs(v - z[-1, -1]) <= 5e-3 for v in numbers_in(got["hover"])), got["hover"]
        got = engine.evaluate(SHOWN, "heatmap-mistake")
        assert got["title"] == TITLES["no_layernorm"]
        normal = got["titleSize"]
        assert engine.evaluate(UNSEEN, list(expected)) == [False] * 3
        off = engine.evaluate(FITS, list(expected))
        assert all(0 <= d <= 1 for d in off), (turn, off)
        assert layout_settled(engine) == [], (turn, engine.evaluate(AXES, list(expected)))
        choose(engine, "mistake", "")
    text_size(engine, large=True)
    try:
        choose(engine, "mistake", "no_layernorm")
        got = engine.evaluate(SHOWN, "heatmap-mistake")
        assert got["titleSize"] > normal and got["key"] and got["painted"], got
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-mistake"), skipped, rtol=0, atol=1e-12)
        choose(engine, "mistake", "")
    finally:
        text_size(engine, large=False)
    # the encoder output, made ahead as Python described it (the answer's "ahead"), shown by the
    # mistake that needs it: the CLS vectors at position 0 of seeded tokens
    choose(engine, "mistake", "last_position")
    z = heatmap_z(engine, "heatmap-encoder")
    np.testing.assert_array_equal(z.reshape(2, 5, 4)[:, 0, :], CLS)
    got = engine.evaluate(SHOWN, "heatmap-encoder")
    assert got["key"] and got["painted"] and got["numberInCell"], got
    assert got["title"].startswith("Encoder output z_L") and got["rowsTitle"] == "row b\u00b7(N+1) + t", got
    np.testing.assert_allclose(shown_numbers(got["table"]), z, rtol=0, atol=5.01e-5)
    assert got["hover"] and any(abs(v - z[-1, -1]) <= 5e-3 for v in numbers_in(got["hover"])), got["hover"]
    assert 0 <= engine.evaluate(FITS, ["heatmap-encoder"])[0] <= 1
    assert layout_settled(engine) == []
    app.assert_clean()


@PAGE  # in Chromium too: axe-core with a mistake and another head chosen
def test_a_mistake_chosen_again_after_none_and_a_resize(app):
    """A comparison's figures stay made while no comparison is chosen (js/heatmap/draw.js:
    clearHeatmap): hidden, they hold no numbers; chosen again after the window changed size,
    they show the mistake's numbers and fit their new width."""
    engine = app.start()
    h_hat, logits = head(CLS, W)
    skipped = CLS @ W  # LayerNorm skipped: the CLS vectors straight into W_head
    figures = ("heatmap-mistake-correct", "heatmap-mistake", "heatmap-mistake-diff")
    choose(engine, "mistake", "no_layernorm")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-mistake"), skipped, rtol=0, atol=1e-12)
    choose(engine, "mistake", "")
    assert [heatmap_z(engine, f) for f in figures] == [None] * 3
    assert engine.evaluate(UNSEEN, list(figures)) == [True] * 3
    engine.set_viewport(900, 720)
    engine.evaluate("() => new Promise((r) => setTimeout(r, 400))")  # Plotly follows resizes later
    choose(engine, "mistake", "no_layernorm")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-mistake-correct"), logits, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-mistake"), skipped, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-mistake-diff"), skipped - logits,
                               rtol=0, atol=1e-12)
    off = engine.evaluate(FITS, list(figures))
    assert all(0 <= d <= 1 for d in off), off
    assert layout_settled(engine) == []
    # another mistake: the same figures, recoloured and retitled in place (js/heatmap/draw.js)
    choose(engine, "mistake", "softmax_inside")
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-mistake"), exp / exp.sum(axis=1, keepdims=True),
                               rtol=0, atol=1e-12)
    title = "(id) => document.querySelector('#' + id + ' .gtitle').textContent"
    assert engine.evaluate(title, "heatmap-mistake") == TITLES["softmax_inside"]
    assert layout_settled(engine) == []
    choose(engine, "variant", "affine")  # and another head beside it
    app.assert_axe_clean("a mistake and another head chosen (900 x 720)")
    choose(engine, "variant", "")
    choose(engine, "mistake", "")
    app.assert_clean()


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_fit.py::test_nothing_is_cut_off_or_overlapping
def test_layout_at_desktop_size(app):
    engine = app.start()
    # the page reused from a narrower window: its titles wrapped again once widths settle
    assert layout_settled(engine) == []
    app.assert_clean()


# A figure saved for slides (js/figure/export.js, js/figure/menu.js) takes the same path in every
# engine, but each engine lays out its text, paints the canvas and deflates the PNG itself
# (CompressionStream). The file the page hands to the browser is caught here (the Blob given
# to URL.createObjectURL for the <a download> it clicks), not saved: Firefox's and WebKit's
# drivers have no download to wait for, and the browser's save is the same for every file.
CATCH_SAVES = """() => {
    window.__saved = [];
    const create = URL.createObjectURL, click = HTMLAnchorElement.prototype.click;
    window.__restoreSaves = () => { URL.createObjectURL = create; HTMLAnchorElement.prototype.click = click; };
    let last = null;
    URL.createObjectURL = (blob) => { last = blob; return create.call(URL, blob); };
    HTMLAnchorElement.prototype.click = function () {
        if (!this.download) return click.call(this);
        window.__saved.push([this.download, last]);
    };
}"""
SAVED = """async (n) => {
    const [name, blob] = window.__saved[n];
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let text = '';
    for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return [name, btoa(text)];
}"""


# the page's own JavaScript, the same on both hosts: run on the PyScript host's page only
@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_figures.py (SVG, PNGs), test_csp.py (ViT-B/16's W_head)
def test_a_heatmap_saved_for_slides_as_svg_and_pngs(app, engine_host):
    engine = app.start()
    engine.evaluate(CATCH_SAVES)
    try:
        for n, fmt in enumerate(["svg", "png", "projector"]):
            engine.click("#heatmap-logits-download")
            engine.wait_for("() => !document.getElementById('heatmap-logits-download-menu').hidden")
            engine.click("#heatmap-logits-download-menu [data-format=%s]" % fmt)
            engine.wait_for("(n) => window.__saved.length > n", n, timeout=10)
        files = [engine.evaluate(SAVED, n) for n in range(3)]
    finally:
        engine.evaluate("() => window.__restoreSaves()")
    names = [name for name, _ in files]
    assert names == ["vit-head-logits.svg", "vit-head-logits.png", "vit-head-logits-1920x1080.png"]
    svg_bytes, png, projector = (base64.b64decode(data) for _, data in files)
    svg = svg_figure(svg_bytes.decode("utf-8"))
    assert svg["title"] == "logits = h_hat @ W_head (B \u00d7 C)"
    assert svg["texts"]["cell-number"] == ["%.2f" % v for v in head(CLS, W)[1].ravel()]
    key = engine.evaluate("() => Array.from(document.querySelectorAll('#heatmap-logits + .colour-key > span'),"
                          " (s) => s.textContent)")
    assert [svg["texts"][k][0] for k in ("key-low", "key-mid", "key-high")] == key
    assert png_size(png) == (2 * svg["width"], 2 * svg["height"])
    assert png_size(projector) == (1920, 1080)
    for data in (png, projector):
        looks = png_looks(engine, data)  # the engine's own decoder reads what it wrote
        assert looks["corner"][:3] == [255, 255, 255] and looks["inked"] > 0.1 and looks["colours"] > 8, looks
    app.assert_clean()


# Handouts (issue 47): the page printed as each browser prints it, read as paper by pdf.js
# (tests/browser/pdf_pages.py; tests/browser/test_page_print.py prints a fuller page in Chromium).
@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_print.py
def test_a_handout_printed_on_a4_and_letter(app, engine_host, engines):
    """Laid out for paper (the page's print rules applied, its beforeprint handlers run), every
    figure lies inside its stage or panel and the walk-through is not over the page; Chromium
    (Playwright's page.pdf) and Firefox (WebDriver BiDi's browsingContext.print) print A4 and
    Letter with nothing in the side margins, every panel's title in order and page 1 at its
    own size, and the figures are drawn at their screen widths again after printing.

    WebKit is checked laid out for paper only: WebKitWebDriver (2.50) has no Print Page command
    (Selenium's print_page is answered "Unknown command"), so nothing can make WebKitGTK print
    under automation. Should its driver learn to print, this test fails until WebKit's PDF is
    read here as the others' are."""
    engine = app.start()
    assert engine.evaluate(PRINT_LAYOUT) == []
    engine.wait_for(BACK_ON_SCREEN)
    if engine.name == "webkit":
        with pytest.raises(EngineError, match="cannot print"):
            engine.print_pdf("A4")
        app.assert_clean()
        return
    titles = PIPELINE_TITLES + ["Step by step, with the numbers of one sample", "Softmax probabilities",
                                "Fine-tune the head"]
    title_px = engine.evaluate("() => parseFloat(getComputedStyle(document.querySelector('h1')).fontSize)")
    reader = PdfReader(engines.get("chromium").browser)
    try:
        for paper in ("A4", "Letter"):
            pages = reader.pages(engine.print_pdf(paper))
            assert handout_problems(pages, paper, titles, title_px) == [], (engine.name, paper)
            engine.wait_for(BACK_ON_SCREEN)
    finally:
        reader.close()
    app.assert_clean()


# A heatmap's cells in view, few and each at least a device pixel, are filled one rectangle each
# (js/heatmap/bitmap.js: fillCells) instead of scaling the one-pixel-per-cell bitmap onto the
# screen's canvas. Compared here with that scaling, on canvases of odd sizes, at the full view and
# zoomed to fractions of cells: a pixel may differ only where the two round a cell's edge apart.
CELL_FILL_VIEWS = [  # left, top (axis units, the first cell's centre is 0), spans, canvas px
    (-0.5, -0.5, None, None, 301, 157), (-0.13, 0.21, 2.37, 1.61, 523, 277),
    (0.7, -0.5, 1.9, 3.3, 411, 389), (-0.5, -0.5, None, None, 600, 333)]


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_bitmap.py
def test_heatmap_cells_filled_one_by_one_are_where_the_scaled_bitmap_puts_them(app):
    engine = app.start()
    far = engine.evaluate("""async (views) => {
        const { fillCells } = await import('./js/heatmap/bitmap.js');
        const bm = document.getElementById('heatmap-w').vitBitmap;
        return views.map(([left, top, spanX, spanY, W, H]) => {
            spanX = spanX || bm.cols; spanY = spanY || bm.rows;
            const a = document.createElement('canvas'), b = document.createElement('canvas');
            a.width = b.width = W; a.height = b.height = H;
            const scaled = a.getContext('2d'), filled = b.getContext('2d');
            scaled.imageSmoothingEnabled = false;
            scaled.drawImage(bm.cells, left + 0.5, top + 0.5, spanX, spanY, 0, 0, W, H);
            const sx = W / spanX, sy = H / spanY;
            if (!fillCells(filled, bm, { left, top, spanX, spanY, sx, sy })) return 'not filled';
            const pa = scaled.getImageData(0, 0, W, H).data, pb = filled.getImageData(0, 0, W, H).data;
            // a pixel's distance from the nearest cell edge (c - 0.5 in axis units), in pixels
            const edge = (p, origin, s) => {
                const u = (p + 0.5) / s + origin + 0.5;
                return Math.abs(u - Math.round(u)) * s;
            };
            let differ = 0, far = 0;
            for (let i = 0; i < W * H; i++) {
                if ([0, 1, 2, 3].every((k) => pa[4 * i + k] === pb[4 * i + k])) continue;
                differ += 1;
                if (Math.min(edge(i % W, left, sx), edge(Math.floor(i / W), top, sy)) > 1) far += 1;
            }
            return [differ, far];
        });
    }""", CELL_FILL_VIEWS)
    assert all(v != "not filled" for v in far), far
    assert all(f == 0 for _, f in far), far  # [pixels that differ, those more than a pixel from an edge]
    app.assert_clean()


FIGURES = ("heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits")


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_projector.py::test_large_text_is_legible_from_the_back_on_a_1080p_projector
def test_large_text_on_a_projector_sized_window(app):
    """The toolbar's Large text, at 1280 x 720: every figure drawn again in larger type, nothing
    cut off or overlapping, and the page still edits."""
    engine = app.start(viewport=(1280, 720))
    titles = "(ids) => ids.map((id) => document.getElementById(id).layout.title.font.size)"
    normal = engine.evaluate(titles, FIGURES)
    text_size(engine, large=True)
    try:
        engine.wait_for("(ids, normal) => document.documentElement.classList.contains('large') && "
                        "ids.every((id, k) => document.getElementById(id).layout.title.font.size > normal[k])",
                        FIGURES, normal)
        settle_layout(engine)
        assert layout_settled(engine) == []
        edit(engine, "cls[0,1]", "2", then="Tab")
        cls = CLS.copy()
        cls[0, 1] = 2
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    finally:
        text_size(engine, large=False)
    app.assert_clean()


# The walk-through's step 5 as a student sees it: each outlined cell range (shape "highlight") in
# screen pixels, each figure's title's bottom and plot area's top, the equation's and Next's
# boxes, the panel's, the window's.
STEP_IN_VIEW = """() => {
  const boxes = [], titles = [];
  for (const id of ['heatmap-normalized', 'heatmap-w', 'heatmap-logits']) {
    const el = document.getElementById(id), area = el.querySelector('.nsewdrag').getBoundingClientRect();
    const { xaxis, yaxis } = el._fullLayout;
    for (const s of (el.layout.shapes || []).filter((s) => s.name === 'highlight')) {
      boxes.push([id, area.left + xaxis.l2p(s.x0), area.top + yaxis.l2p(s.y1), area.left + xaxis.l2p(s.x1),
                  area.top + yaxis.l2p(s.y0)]);
    }
    // its title (none on a bare figure) against the top of its plot area
    const t = el.querySelector('.gtitle');
    titles.push([id, t && t.textContent ? t.getBoundingClientRect().bottom : null, area.top]);
  }
  const own = ['walk-math', 'walk-next'].map((id) => { const r = document.getElementById(id).getBoundingClientRect();
    return [id, r.left, r.top, r.right, r.bottom]; });
  const p = document.getElementById('walk').getBoundingClientRect();
  return { boxes, own, titles, panel: [p.left, p.top, p.right, p.bottom], view: [innerWidth, innerHeight] };
}"""


def step_out_of_view(seen):
    """What STEP_IN_VIEW found off the window, or under the walk-through's panel."""
    view_w, view_h = seen["view"]
    px0, py0, px1, py1 = seen["panel"]
    problems = [] if len(seen["boxes"]) == 3 else ["%d outlined ranges, not 3" % len(seen["boxes"])]
    for name, x0, y0, x1, y1 in seen["boxes"] + seen["own"]:
        if not (x0 >= -1 and y0 >= -1 and x1 <= view_w + 1 and y1 <= view_h + 1):
            problems.append("%s off the window" % name)
    for name, x0, y0, x1, y1 in seen["boxes"]:
        if not (min(x1, px1) - max(x0, px0) <= 1 or min(y1, py1) - max(y0, py0) <= 1):
            problems.append("%s under the panel" % name)
    for name, title_bottom, plot_top in seen["titles"]:
        if title_bottom is not None and title_bottom > plot_top - 2:
            problems.append("%s's title on its plot (%.1f px past its top less 2)" % (
                name, title_bottom - plot_top + 2))
    return problems


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_projector.py
@pytest.mark.parametrize("width, height, large", [(960, 540, True), (640, 360, True), (390, 844, False)],
                         ids=["200-percent", "300-percent", "phone"])
def test_the_walk_through_at_200_and_300_percent_zoom_and_on_a_phone(app, engine_host, width, height, large):
    """1920 x 1080 at 200 % and 300 % zoom are 960 x 540 and 640 x 360 windows (with Large text),
    and a phone's: step 5 (one dot product) shows its equation, Next and the three figures'
    outlined cells together, none under the panel; on the page the other scenarios used at
    desktop size, resized (Chromium's, on pages opened at each size: test_page_projector.py)."""
    engine = app.start(viewport=(width, height))
    if large:
        text_size(engine, large=True)
    try:
        before = renders(engine)
        engine.click("#walk-open")
        wait_render_after(engine, before)
        engine.wait_for("() => document.querySelectorAll('#walk-progress button').length === 7")
        before = renders(engine)
        engine.evaluate("() => document.querySelectorAll('#walk-progress button')[4].click()")
        wait_render_after(engine, before)
        # revealed after the redraw, and again once a changed layout settles (js/panels/walkthrough.js)
        engine.wait_for("() => document.getElementById('walk').dataset.step === '4'")
        engine.wait_for(STEP_REVEALED)
        # as the student sees it once the figures have followed the new window size
        seen = {}

        def look():
            seen.update(engine.evaluate(STEP_IN_VIEW))
            return step_out_of_view(seen)
        assert settled(look) == [], seen
        before = renders(engine)
        engine.evaluate("() => document.getElementById('walk-start').click()")  # ends it
        wait_render_after(engine, before)
    finally:
        if large:
            text_size(engine, large=False)
    app.assert_clean()


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_fit.py::test_a_phone_scrolls_over_heatmaps_and_has_big_targets
def test_phone_width_works_and_nothing_is_cut_off(app):
    engine = app.start(viewport=(390, 844))
    settle_layout(engine)
    width = engine.evaluate("() => innerWidth")
    assert width == 390 or 390 < width <= engine.narrowest, width  # MiniBrowser: 447 at least
    assert layout_settled(engine) == []
    edit(engine, "cls[1,2]", "2", then="Tab")
    cls = CLS.copy()
    cls[1, 2] = 2
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    app.assert_clean()


# A logit pointed at (js/panels/linked.js): its terms in a card over what follows, nothing below moved
CARD = """() => {
    const card = document.getElementById('contributions');
    const box = card.getBoundingClientRect();
    const cut = Array.from(card.querySelectorAll('.bar-track, .bar-value')).filter((e) => {
        const r = e.getBoundingClientRect();
        return r.left < box.left - 0.5 || r.right > box.right + 0.5;
    }).length;
    return {shown: !card.hidden, float: card.dataset.float || null, logit: card.dataset.logit || null, cut,
            seen: Math.min(box.bottom, innerHeight) - Math.max(box.top, 0), height: box.height,
            below: ['logits-table', 'mistakes'].map((id) => document.getElementById(id).getBoundingClientRect().top + scrollY),
            gap: document.querySelector('#stage-logits .logits-numbers').getBoundingClientRect().top
                 - card.previousElementSibling.getBoundingClientRect().bottom,
            terms: Array.from(card.querySelectorAll('#contributions-bars li'),
                              (li) => [li.querySelector('.bar-label').textContent, li.querySelector('.bar-factors').textContent])};
}"""


@PAGE
def test_a_logit_pointed_at_shows_its_terms_over_the_page(app, engine_host):
    """At 1280 x 800 with no logit chosen, no place is kept for a logit's terms (the logits table
    follows the hint); the mouse on logit (1, 2) shows its terms as a card over what follows,
    nothing below it moving, every bar and value inside the card, each term's factors those of
    NumPy's h_hat and W_head, and the card lifted into the window; Esc puts the card away with
    the pointer still there (WCAG 1.4.13)."""
    engine = app.start(viewport=(1280, 800))
    settle_layout(engine)
    before = engine.evaluate(CARD)
    assert not before["shown"] and 0 <= before["gap"] < 30, before
    engine.point("#heatmap-logits .nsewdrag", at=(5 / 6, 3 / 4))  # row 1 of 2, column 2 of 3
    engine.wait_for("() => document.getElementById('contributions').dataset.logit === '1,2' && "
                    "!document.getElementById('contributions').hidden")
    got = engine.evaluate(CARD)
    assert got["float"] == "true" and got["cut"] == 0, got
    assert got["seen"] >= min(got["height"], 200), got  # lifted into the window where it can be
    assert all(abs(a - b) <= 0.5 for a, b in zip(got["below"], before["below"])), (before, got)
    h_hat, _ = head(CLS, W)
    assert sorted(got["terms"]) == sorted(
        ["d = %d" % d, "%.4f \u00d7 %.4f =" % (h_hat[1, d], W[d, 2])] for d in range(4)), got["terms"]
    engine.press("Escape")
    engine.wait_for("() => document.getElementById('contributions').hidden")
    engine.point("#h-logits")  # the pointer leaves: nothing comes back, nothing moved
    after = engine.evaluate(CARD)
    assert not after["shown"] and after["below"] == before["below"], after
    app.assert_clean()
