"""A page a teacher can trust on every screen: nothing cut off, overlapping or jumping, at any
width, zoom, text spacing and text size, on a phone, in dark mode, in print and with reduced
motion. Expected numbers come from NumPy written out here (tests/browser/trustkit.py).
"""
import time

import numpy as np
import pytest

from .conftest import PageLog
from .engines.app import layout_settled
from .engines.kit import contrast, luminance, rgb
from .pagekit import act, load_link, open_explorer, set_viewport, worked_link
from .trustkit import CLS, load_preset, settle, type_keys

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


# ---- nothing cut off, nothing jumps ------------------------------------------------------------

VIEWPORTS = {"narrow phone": (320, 640), "phone": (390, 844), "desktop": (1280, 900),
             "wide": (1920, 1080), "very wide": (2560, 1440)}


def layout_problems(page):
    """The layout check once the figures have followed a changed layout (engines/app.py)."""
    return layout_settled(page, seconds=2)


def test_nothing_is_cut_off_or_overlapping(site_url, context):
    """At each size, narrowest first: a page booted at the first size (in the host's context: its
    caches are warm), then, for each other size, the same page at that size with a new session
    (Reset), so that every size is laid out from a first redraw, as a boot lays it out (what a
    resize alone does is test_page_resize.py's). The worked example, then ViT-B/16 with a
    mistake and a variant beside it, with two numbers tables open."""
    shown = context.new_page()
    try:
        log = PageLog(shown)
        for k, (name, (width, height)) in enumerate(VIEWPORTS.items()):
            shown.set_viewport_size({"width": width, "height": height})
            if k == 0:
                open_explorer(shown, site_url)
            else:
                act(shown, lambda: shown.click("#reset"))
                assert shown.evaluate("() => document.getElementById('mistake').value") == "", name
            for details in shown.locator("details.numbers-toggle").all()[:2]:
                if not details.evaluate("(d) => d.open"):
                    details.locator("summary").click()  # open tables are checked too
            assert layout_problems(shown) == [], name
            load_preset(shown, "vit-b16")
            assert layout_problems(shown) == [], name
            # the top-k table of the logits fits: its class names wrap, it does not scroll sideways
            assert shown.evaluate("() => { const s = document.getElementById('top-k-table')"
                                  ".parentElement; return s.scrollWidth <= s.clientWidth + 1; }"), name
            # so do the comparisons' top-k tables (one column per rank), on a phone as lists
            act(shown, lambda: shown.select_option("#mistake", "softmax_inside"))
            act(shown, lambda: shown.select_option("#variant", "gap"))
            assert layout_problems(shown) == [], name
            for table in ("mistake-top-k", "variant-top-k"):
                box = shown.locator("#%s" % table).locator("xpath=..")
                assert box.is_visible(), (name, table)
                if width <= 600:
                    assert box.evaluate("s => s.scrollWidth <= s.clientWidth + 1"), \
                        "%s scrolls sideways at %d px" % (table, width)
            check_ranked_table_semantics(shown, "mistake-top-k")
        log.close()
        log.assert_clean(site_url)
    finally:
        shown.close()


def test_the_first_screen_shows_the_heads_pipeline(page, site_url):
    """Without scrolling, on a laptop (1280 x 800, 1366 x 768, 1280 x 720): the overview from
    image to logits, the inputs' grid, the logits' cells (and LayerNorm's at 800 px) and the
    prediction (at 1366 x 768 and
    1280 x 720 the logits were below the fold); no stage stretched to another's height; the
    comparisons directly under the pipeline (they were 3,000 px down, after the drawing panel,
    which comes after them; the overview's "image" leads to it)."""
    for width, height in [(1280, 800), (1366, 768), (1280, 720)]:
        set_viewport(page, {"width": width, "height": height})
        page.evaluate("() => window.scrollTo(0, 0)")
        if width == 1280 and height == 800:
            open_explorer(page, site_url)
        boxes = page.evaluate("""() => Object.fromEntries(['overview', 'stage-input', 'stage-norm', 'stage-w',
            'stage-logits', 'grid-input', 'prediction', 'mistakes', 'variants', 'digit'].map((id) => {
            const r = document.getElementById(id).getBoundingClientRect();
            return [id, [r.left, r.top, r.right, r.bottom]]; }))""")
        where = "%d x %d: %r" % (width, height, boxes)
        for shown in ("grid-input", "prediction"):
            assert 0 <= boxes[shown][1] and boxes[shown][3] <= height, (shown, where)
        for heatmap in ("heatmap-logits", "heatmap-normalized" if height >= 800 else "heatmap-logits"):
            box = page.locator("#%s .nsewdrag" % heatmap).first.bounding_box()  # the cells' area, whole
            assert box["height"] > 30 and box["y"] + box["height"] <= height, (heatmap, where)
        # each stage ends where its content does: an empty band at a stage's foot is not kept
        ends = page.evaluate("""() => Array.from(document.querySelectorAll('#pipeline > .stage'), (s) => {
            const last = Array.from(s.children).filter((c) => c.getClientRects().length).pop();
            return s.getBoundingClientRect().bottom - last.getBoundingClientRect().bottom; })""")
        assert all(end < 40 for end in ends), (ends, where)
        bottom = max(boxes[s][3] for s in ("stage-input", "stage-norm", "stage-w", "stage-logits"))
        assert 0 < boxes["mistakes"][1] - bottom < 40 and boxes["variants"][1] == boxes["mistakes"][1], where
        assert boxes["digit"][1] > boxes["mistakes"][3] and boxes["digit"][1] > height, where
    overview = page.locator("#overview")
    assert overview.is_visible() and "logits" in overview.inner_text()
    assert page.locator("#overview a").get_attribute("href") == "#digit"


# WCAG 1.4.12's text spacing, as a reader's own style sheet sets it.
TEXT_SPACING = """* { line-height: 1.5 !important; letter-spacing: 0.12em !important;
                     word-spacing: 0.16em !important; }
                   p, li, dd, figcaption { margin-bottom: 2em !important; }"""


def test_nothing_is_cut_off_with_wcag_text_spacing(page, site_url):
    """WCAG 1.4.12: with line height 1.5, paragraph spacing 2, letter spacing 0.12 and word
    spacing 0.16 (a constructed style sheet: the page's policy refuses inline styles, and
    a reader's extension adds its own this way), nothing is cut off or overlaps, on a
    laptop and on a phone."""
    open_explorer(page, site_url)
    try:
        page.evaluate("""(css) => { const sheet = new CSSStyleSheet(); sheet.replaceSync(css);
            document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet]; }""", TEXT_SPACING)
        assert page.evaluate("() => getComputedStyle(document.querySelector('p')).letterSpacing") != "normal"
        for size in ({"width": 1280, "height": 900}, {"width": 390, "height": 844}):
            set_viewport(page, size)
            act(page, lambda: page.click("#reset"))
            assert layout_problems(page) == [], size
    finally:
        page.evaluate("() => { document.adoptedStyleSheets = []; }")  # the kit's reset sizes it back


def test_printed_equations_are_not_cut(page, site_url):
    """On paper (an A4 page's 720 px width, print media) every equation of the steps panel fits
    its box, the long dot product of the tiny ViT's 32 features too: it wraps, as paper does
    not scroll."""
    open_explorer(page, site_url)
    set_viewport(page, {"width": 720, "height": 1000})
    page.emulate_media(media="print")
    try:
        for state in ("worked", "digit"):
            if state == "digit":
                page.emulate_media(media="screen")
                thumb = page.locator("#digit-gallery .digit-thumb").nth(3)
                act(page, lambda: thumb.click())
                page.emulate_media(media="print")
            page.wait_for_function("() => document.querySelectorAll('#step-list .katex-display').length >= 3")
            cut = page.evaluate("""() => Array.from(document.querySelectorAll('.katex-display')).flatMap((el) => {
                const box = el.closest('li, .walk-math, .panel').getBoundingClientRect();
                const parts = Array.from(el.querySelectorAll('.katex-html > .base'), (b) => b.getBoundingClientRect());
                const right = Math.max(...parts.map((r) => r.right));
                const left = Math.min(...parts.map((r) => r.left));
                return right > box.right + 0.5 || left < box.left - 0.5 || el.scrollWidth > el.clientWidth + 1
                    ? [[el.textContent.slice(0, 40), left, right, box.left, box.right]] : [];
            })""")
            assert cut == [], (state, cut)
    finally:
        page.emulate_media(media="screen")


def test_the_layernorm_statistics_fit_without_scrolling_sideways(page, site_url):
    """The per-sample statistics (mean, variance, sqrt(var + eps)) fit the width of a 320 px
    phone and of a quarter of a laptop's row (stage 2 from 1200 px); where the stage is wider
    (a quarter of 1920 px), each header stays on one line."""
    open_explorer(page, site_url)
    for name in ["narrow phone", "phone", "desktop", "wide"]:
        width, height = VIEWPORTS[name]
        set_viewport(page, {"width": width, "height": height})
        table = page.locator("#stats")
        box = table.locator("xpath=..")
        assert box.evaluate("s => s.scrollWidth <= s.clientWidth + 1"), \
            "the statistics scroll sideways by %d px at %d px" % (
                box.evaluate("s => s.scrollWidth - s.clientWidth"), width)
        mu = CLS.mean(axis=1)
        var = ((CLS - mu[:, None]) ** 2).mean(axis=1)
        rows = table.locator("tbody tr")
        for b in range(len(CLS)):
            cells = rows.nth(b).locator("td").all_inner_texts()
            assert cells == ["%.4f" % mu[b], "%.4f" % var[b], "%.4f" % np.sqrt(var[b] + 1e-6)], name
        if width >= 1800:
            heights = table.evaluate("t => [t.tHead.rows[0], t.tBodies[0].rows[0]]"
                                     ".map(r => r.getBoundingClientRect().height)")
            assert heights[0] < 1.3 * heights[1], "a header wraps at %d px: %s" % (width, heights)


def check_ranked_table_semantics(page, table_id):
    """A ranked table keeps its table semantics however it is laid out: its accessibility tree
    has a table, one row per sample and the rank headers, and each cell names its class."""
    snapshot = page.locator("#" + table_id).aria_snapshot()
    assert snapshot.startswith("- table"), snapshot
    for rank in range(1, 6):
        assert 'columnheader "#%d"' % rank in snapshot, snapshot
    assert 'rowheader "sample 0"' in snapshot and 'rowheader "sample 1"' in snapshot, snapshot
    assert snapshot.count('cell "class ') == 10, snapshot  # 2 samples x 5 ranks


def test_nothing_is_cut_off_at_150_percent_zoom(browser, site_url):
    """Browser zoom 150% on a 1280 px window: a 853 px wide CSS viewport at 1.5 device pixels."""
    context = browser.new_context(viewport={"width": 853, "height": 600}, device_scale_factor=1.5)
    try:
        page = context.new_page()
        open_explorer(page, site_url)
        assert layout_problems(page) == []
    finally:
        context.close()


def embed_shows_what_fits(page):
    """The embed view booted at 800 x 600: what it shows and hides to fit."""
    assert page.locator(".lede").is_hidden()
    assert page.locator("#mistakes").is_hidden()
    # The inputs show as their editable grids (the numbers, and where to change them); their
    # heatmaps would repeat them in a frame that has no room to spare (the whole
    # embed fits 800 x 600 without a scroll bar). The computed stages show as heatmaps.
    for grid_id in ("grid-input", "grid-w"):
        assert page.locator("#" + grid_id).is_visible()
    for element_id in ("heatmap-cls", "heatmap-w"):
        assert page.locator("#" + element_id).is_hidden()
    for element_id in ("heatmap-normalized", "heatmap-logits"):
        assert page.locator("#" + element_id).is_visible()
        # small matrices print their values here: no colour key takes the room
        assert page.locator("#%s + .colour-key" % element_id).is_hidden()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 800, "the embed view scrolls sideways: %d px" % width
    box = page.locator("#heatmap-logits").bounding_box()
    assert box["y"] + box["height"] <= 600 + 1, "the logits do not fit in 600 px: %r" % box


@pytest.mark.fresh_page  # the embed view (?embed=1) is another page than the one reused
def test_the_embed_fits_its_frame_without_a_scroll_bar(page, site_url):
    """Booted at 800 x 600, then at 640 x 480 with a link: it fits without a scroll bar, an
    error does not make it taller, and the full page is one click away."""
    fits = "document.scrollingElement.scrollHeight <= innerHeight && " \
           "document.scrollingElement.scrollWidth <= innerWidth"
    for k, size in enumerate([(800, 600), (640, 480)]):
        set_viewport(page, {"width": size[0], "height": size[1]})
        if k == 0:
            open_explorer(page, site_url, query="?embed=1")  # booted at the first size
            embed_shows_what_fits(page)
        else:
            load_link(page, worked_link())
        assert page.evaluate(fits), size
        assert layout_problems(page) == [], size
        # An error does not make it taller, and the full page is one click away.
        box = type_keys(page, "W_head[0,0]", "x")
        box.press("Enter")
        page.wait_for_function("() => document.getElementById('alert').textContent.length > 0")
        assert page.evaluate(fits), size
        link = page.locator("#full-page")
        assert link.is_visible() and "embed" not in link.get_attribute("href"), size


@pytest.mark.fresh_page  # its init script watches the layout from the first paint
def test_alerts_and_toasts_never_move_the_page(page, site_url, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.add_init_script("""
        // Every layout shift whose sources moved on screen. (Chromium also reports the text
        // scrolling inside the input being typed in, a shift of about 6e-6 whose box stays put.)
        window.__shift = 0;
        // A source without a node is inside an element (the text box of a cell, whose padding
        // leaves room for the scrub handle while it has focus): the element itself stays put.
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) {
            const moved = e.sources.some((s) => s.node &&
              JSON.stringify(s.previousRect) !== JSON.stringify(s.currentRect));
            if (moved) window.__shift += e.value;
          }
        }).observe({type: "layout-shift", buffered: true});
    """)
    open_explorer(page, site_url)
    settle(page)
    page.evaluate("window.__shift = 0")
    box = type_keys(page, "cls[0,2]", "-")  # no alert yet
    box.press_sequentially("x", delay=30)  # now an alert
    page.wait_for_function("() => document.getElementById('alert').textContent.length > 0")
    box.press("Enter")
    page.locator("#copy-link").click()
    page.wait_for_function("() => document.getElementById('toast').textContent.includes('copied')")
    time.sleep(0.3)
    assert page.evaluate("window.__shift") == 0


# ---- phone and touch -------------------------------------------------------------------------

def test_a_phone_scrolls_over_heatmaps_and_has_big_targets(browser, site_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                  is_mobile=True, device_scale_factor=2)
    try:
        page = context.new_page()
        open_explorer(page, site_url)
        assert page.locator(".modebar").count() == 0  # no Plotly toolbar over the titles
        small = page.evaluate("""() => [...document.querySelectorAll(
              '.toolbar button, .toolbar select, .toolbar input, .dims input, .dims button, .grid-body input')]
            .filter(e => e.offsetParent && e.getBoundingClientRect().height < 44)
            .map(e => e.id || e.getAttribute('aria-label') || e.textContent)""")
        assert small == []
        # a keypad that can type a minus sign: iOS's decimal pad has none
        modes = set(page.evaluate("[...document.querySelectorAll('.grid-body input')].map(e => e.inputMode)"))
        assert modes == {"text"}
        plot = page.locator("#heatmap-logits")
        plot.scroll_into_view_if_needed()
        range_before = page.evaluate("document.getElementById('heatmap-logits').layout.yaxis.range")
        y_before = page.evaluate("scrollY")
        box = plot.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = context.new_cdp_session(page)  # a finger: touch start, ten moves up, lift
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for k in range(1, 11):
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove",
                                                  "touchPoints": [{"x": x, "y": y - 20 * k}]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_function("y => scrollY > y + 100", arg=y_before, timeout=10000)
        assert page.evaluate("document.getElementById('heatmap-logits').layout.yaxis.range") == range_before
    finally:
        context.close()


# ---- dark, print, reduced motion, large text --------------------------------------------------

@pytest.mark.fresh_page  # booted in the dark scheme with reduced motion (warm caches)
def test_dark_mode_print_reduced_motion_and_large_text(page, site_url):
    set_viewport(page, {"width": 1280, "height": 900})
    page.emulate_media(color_scheme="dark", reduced_motion="reduce")
    open_explorer(page, site_url)
    paper = rgb(page.evaluate("getComputedStyle(document.body).backgroundColor"))
    ink = rgb(page.evaluate("getComputedStyle(document.body).color"))
    assert luminance(paper) < 0.05 and contrast(ink, paper) >= 7
    plot_ink = page.evaluate("document.getElementById('heatmap-logits').layout.font.color")
    assert contrast(rgb(plot_ink), paper) >= 4.5
    assert layout_problems(page) == []
    durations = page.evaluate("""[...document.querySelectorAll('button, .cell, .toast, #toast')]
        .map(e => getComputedStyle(e).transitionDuration)""")
    assert set(durations) <= {"0s"}
    small = page.evaluate("document.getElementById('heatmap-logits').layout.font.size")
    page.emulate_media(media="print")
    assert not page.locator(".toolbar").is_visible()
    page.emulate_media(media="screen")
    page.locator("#text-size").click()
    page.wait_for_function("() => document.documentElement.classList.contains('large')")
    page.wait_for_function("s => document.getElementById('heatmap-logits').layout.font.size > s",
                           arg=small)
    assert page.evaluate("document.getElementById('heatmap-logits').layout.font.size") >= 15
    assert layout_problems(page) == []


@pytest.mark.fresh_page  # booted in the light scheme (warm caches)
def test_a_colour_scheme_switched_while_open_redraws_the_figures_in_its_ink(page, site_url):
    """The page reads its text colour once per colour scheme (js/page/dom.js), not per figure: when
    the scheme changes with the page open (the system goes dark at sunset), every heatmap and
    the fine-tuning charts are drawn again in the new ink, readable on the new paper."""
    set_viewport(page, {"width": 1280, "height": 900})
    page.emulate_media(color_scheme="light")
    open_explorer(page, site_url)
    fonts = """() => ['heatmap-logits', 'heatmap-cls', 'loss-curve', 'compare-curves']
                     .map(id => document.getElementById(id).layout.font.color)"""
    light = page.evaluate(fonts)
    assert len(set(light)) == 1
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("""light => ['heatmap-logits', 'heatmap-cls', 'loss-curve',
        'compare-curves'].every(id => document.getElementById(id).layout.font.color !== light)""",
                           arg=light[0])
    dark = page.evaluate(fonts)
    paper = rgb(page.evaluate("getComputedStyle(document.body).backgroundColor"))
    ink = rgb(dark[0])
    assert len(set(dark)) == 1 and contrast(ink, paper) >= 7
    assert dark[0] == page.evaluate(
        "getComputedStyle(document.documentElement).getPropertyValue('--ink').trim()")
    assert layout_problems(page) == []


# Each heatmap's title as drawn, measured in its font by a canvas (js/heatmap/layout.js wrapTitle):
# [id, the room beside the "Download figure" button (the figure's width less 12 px and the
# button's 34 px: js/figure/menu.js), [[the line's width, its width with the next line's first
# word, its words], ...]]. A shape in parentheses, "(B × D)", is one word.
TITLE_LINES = """() => {
    const ctx = document.createElement('canvas').getContext('2d');
    const words = (text) => text.split(/ +(?![^(]*\\))/);
    return [...document.querySelectorAll('.plot')]
        .filter(e => e.data && e.layout && e.layout.title && e.dataset.bitmap !== undefined)
        .map(e => {
            ctx.font = `${e.layout.title.font.size}px ${e.layout.font.family}`;
            const lines = e.layout.title.text.split('<br>');
            return [e.id, (e.clientWidth || 600) - 12 - 34, lines.map((line, i) => [
                ctx.measureText(line).width,
                i + 1 < lines.length ? ctx.measureText(line + ' ' + words(lines[i + 1])[0]).width : 0,
                words(line).length])];
        });
}"""


def _badly_wrapped(figures):
    """The titles not wrapped greedily at spaces for the room they have: a line of more than
    one word wider than the room, or a line that the next line's first word would have fitted."""
    bad = []
    for id_, room, lines in figures:
        for width, with_next, words in lines:
            if (words > 1 and width > room) or (with_next and with_next <= room):
                bad.append((id_, room, lines))
                break
    return bad


def test_titles_are_wrapped_for_the_width_their_figure_has_now(page, site_url):
    """The heatmaps take their width from a ResizeObserver, not by measuring as they draw
    (docs/performance.md): a figure whose width changes after it was drawn (large text moves the
    layout) is drawn again when its title would wrap differently. Checked against the rule, each
    line measured in the title's font for each figure's width as the page has it after the
    toggle, both ways."""
    open_explorer(page, site_url)
    for width, height in [(800, 600), (390, 844)]:
        set_viewport(page, {"width": width, "height": height})
        for step in ("large", "normal"):
            page.locator("#text-size").click()
            page.wait_for_function("want => document.documentElement.classList.contains('large') === want",
                                   arg=step == "large")
            page.wait_for_timeout(1500)  # the figures redraw; a changed width is seen a frame later
            shown = page.evaluate(TITLE_LINES)
            assert len(shown) >= 4
            assert _badly_wrapped(shown) == [], (width, step)
