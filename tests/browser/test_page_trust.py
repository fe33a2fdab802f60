"""A page a teacher can trust on every screen: an edit keeps only what was meant,
sharing never lies, nothing is cut off or jumps, and phones, keyboards and screen readers get
the same page. Expected numbers come from NumPy written out here, never from pycore.
"""
import json
import os
import re
import time
from urllib.parse import unquote

import numpy as np
import pytest
from reference import WORKED_CLS, WORKED_W_HEAD

from .conftest import PageLog
from .engines.kit import contrast, luminance, rgb
from .pagekit import (BOOT_TIMEOUT_MS, act, alert_text, heatmap_z, load_link, open_explorer,
                      page_fragment, renders, set_viewport, state_fragment, wait_ready,
                      wait_render_after, worked_link)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "layout_check.js"), encoding="utf-8") as f:
    LAYOUT_CHECK = f.read()

CLS, W = np.array(WORKED_CLS), np.array(WORKED_W_HEAD)  # the worked example (docs/math.md)


def head(cls, w):
    """LayerNorm without gamma/beta (population variance, eps 1e-6 inside the root), times W."""
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return (cls - mu) / np.sqrt(var + 1e-6) @ w


def cell(page, label):
    return page.get_by_label(label, exact=True)


def type_keys(page, label, text):
    """Click a cell and type `text` key by key (the cell selects its text on focus)."""
    box = cell(page, label)
    box.click()
    box.press_sequentially(text, delay=30)
    return box


def settle(page, quiet_ms=400):
    """Wait until the page has had no new render for quiet_ms (typing may cause several)."""
    last, since = renders(page), time.monotonic()
    while time.monotonic() - since < quiet_ms / 1000.0:
        time.sleep(0.05)
        now = renders(page)
        if now != last:
            last, since = now, time.monotonic()


# ---- edits commit what was meant ----------------------------------------------------------

@pytest.mark.hosts("pyscript", "fallback")
def test_an_entry_that_ends_invalid_keeps_nothing_of_it(page, site_url):
    """Typing previews valid prefixes (1, 1e9, 3, 0), but Enter on the whole, invalid entry
    leaves every stage and the link as before the edit, and the cell shows its old value."""
    open_explorer(page, site_url)
    before_url, before_logits = page_fragment(page), heatmap_z(page, "heatmap-logits")
    np.testing.assert_allclose(before_logits, head(CLS, W), atol=1e-12)
    for text in ["1e999", "3/4", "1,5", "0x10"]:
        box = type_keys(page, "cls[0,1]", text)
        settle(page)
        assert "cls[0,1]" in alert_text(page), text
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('[aria-label=\"cls[0,1]\"]').value === '-1'")
        settle(page)
        np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), CLS, err_msg=text)
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(CLS, W), atol=1e-12,
                                   err_msg=text)
        assert page_fragment(page) == before_url, text
        assert box.get_attribute("aria-invalid") is None, text


@pytest.mark.fresh_page  # the warm-up runs once, after the boot
@pytest.mark.hosts("pyscript", "fallback")
def test_pythons_warm_up_never_touches_what_the_page_shows(page, site_url):
    """Once ready, the page has Python practise edits in a session of its own (web/js/warmup.js).
    A person typing at once is answered in between; the practice ends ("done") and has changed
    nothing shown: cells, heatmaps, link, the render count."""
    open_explorer(page, site_url)
    assert page.evaluate("document.documentElement.dataset.warmUp") == "0 of 48"
    box = type_keys(page, "cls[1,2]", "2.5")
    box.press("Tab")
    settle(page)
    expected = CLS.copy()
    expected[1, 2] = 2.5
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    shown = (renders(page), page_fragment(page),
             page.evaluate("document.documentElement.dataset.lastRenderMs"))
    progress = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        progress.add(page.evaluate("document.documentElement.dataset.warmUp"))
        if "done" in progress:
            break
        time.sleep(0.05)
    assert "done" in progress, progress
    assert len(progress) >= 3  # it counted its way there ("12 of 48", ...)
    time.sleep(0.3)
    assert (renders(page), page_fragment(page),
            page.evaluate("document.documentElement.dataset.lastRenderMs")) == shown
    cells = page.evaluate("""() => Object.fromEntries(Array.from(
        document.querySelectorAll('#grid-input input, #grid-w input'), c => [c.getAttribute('aria-label'), c.value]))""")
    for (name, m) in (("cls", expected), ("W_head", W)):
        for (i, j), v in np.ndenumerate(m):
            assert float(cells["%s[%d,%d]" % (name, i, j)].replace("\u2212", "-")) == v
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), W)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(expected, W), atol=1e-12)
    link = json.loads(unquote(page_fragment(page).split("state=", 1)[1]))
    np.testing.assert_array_equal(link["cls"], expected)
    np.testing.assert_array_equal(link["W_head"], W)
    # and Python's state is the person's alone: the next edit shows it and nothing else
    w = W.copy()
    w[0, 0] = 1.5
    before = renders(page)
    type_keys(page, "W_head[0,0]", "1.5")
    wait_render_after(page, before)
    settle(page)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), w)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(expected, w), atol=1e-12)
    link = json.loads(unquote(page_fragment(page).split("state=", 1)[1]))
    assert (link["cls"], link["W_head"]) == (expected.tolist(), w.tolist())


def test_escape_restores_the_text_from_before_the_edit(page, site_url):
    open_explorer(page, site_url)
    box = type_keys(page, "W_head[1,2]", "25")  # valid all the way: previewed while typing
    page.wait_for_function("() => document.getElementById('heatmap-w').data[0].z[1][2] === 25")
    box.press("Escape")
    page.wait_for_function("() => document.getElementById('heatmap-w').data[0].z[1][2] === -0.5")
    assert box.input_value() == "-0.5"
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(CLS, W), atol=1e-12)


def test_text_that_can_still_become_a_number_raises_no_alert(page, site_url):
    open_explorer(page, site_url)
    for start in ["-", "1e", ".", "-."]:
        box = type_keys(page, "cls[1,0]", start)
        settle(page)
        assert alert_text(page) == "" and box.get_attribute("aria-invalid") is None, start
        assert page.locator("[role=alert]:visible").count() == 0, start
        box.press_sequentially("5", delay=30)
        number = float(start + "5") if start != "1e" else 1e5
        page.wait_for_function("v => document.getElementById('heatmap-cls').data[0].z[1][0] === v",
                               arg=number)
        expected = CLS.copy()
        expected[1, 0] = number
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(expected, W), atol=1e-9,
                                   err_msg=start)
        box.press("Tab")  # the entry ends: the next one selects the cell's text as it is entered


def test_the_focused_cell_shows_what_a_real_paste_put_there(page, site_url, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    page.evaluate("navigator.clipboard.writeText('9\\t8\\n7\\t6')")
    box = cell(page, "cls[0,1]")
    box.click()
    before = renders(page)
    page.keyboard.press("Control+V")
    wait_render_after(page, before)
    expected = CLS.copy()
    expected[0:2, 1:3] = [[9, 8], [7, 6]]
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,1]"
    assert box.input_value() == "9"  # the focused cell too, not only its neighbours
    assert cell(page, "cls[1,2]").input_value() == "6"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    assert box.input_value() == "9"


def test_a_new_link_redraws_the_focused_cell(page, site_url):
    open_explorer(page, site_url)
    box = cell(page, "cls[0,0]")
    box.click()
    state = {"cls": [[5, 1, 2, 3], [0, 1, 0, 1]], "W_head": W.tolist()}
    before = renders(page)
    page.evaluate("f => { location.hash = f; }", state_fragment(state)[1:])
    wait_render_after(page, before)
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,0]"
    assert box.input_value() == "5"
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               head(np.array(state["cls"], float), W), atol=1e-12)


# ---- sharing never lies ----------------------------------------------------------------------

def set_dims(page, **dims):
    for name, value in dims.items():
        box = page.locator("#dim-" + name)
        box.click()
        box.press("Control+A")
        box.press_sequentially(str(value), delay=20)
    act(page, lambda: page.locator("#apply-dims").click())


def test_copy_link_refuses_a_state_too_big_for_a_link(page, site_url, context):
    """6,528 typed-in numbers at full precision make a link of more than 100 kB: Copy link
    leaves the clipboard alone, says why with the right count, and offers the JSON instead."""
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    set_dims(page, D=64, C=100)
    w = np.random.default_rng(7).standard_normal((64, 100))
    text = "\n".join("\t".join(repr(float(x)) for x in row) for row in w)
    page.evaluate("t => navigator.clipboard.writeText(t)", text)
    cell(page, "W_head[0,0]").click()
    before = renders(page)
    page.keyboard.press("Control+V")
    wait_render_after(page, before, timeout=60000)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), w)
    page.evaluate("navigator.clipboard.writeText('left alone')")
    page.locator("#copy-link").click()
    page.wait_for_selector("#export-dialog[open]")
    assert page.inner_text("#export-title") == "This state is too big for a link"
    note = page.inner_text("#export-message")
    assert "{:,}".format(2 * 64 + 64 * 100) in note and "too many for a link" in note
    assert page_fragment(page) == ""  # the address bar no longer holds the state before the paste
    assert page.evaluate("navigator.clipboard.readText()") == "left alone"
    assert "copied" not in page.locator("#toast").inner_text().lower()
    assert page.locator("#export-copy").is_hidden()  # no link to copy anyway
    with page.expect_download() as info:
        page.locator("#export-as-json").click()
    assert info.value.suggested_filename == "vit-head-state.json"
    with open(info.value.path(), encoding="utf-8") as f:
        shown = json.load(f)
    np.testing.assert_array_equal(np.array(shown["W_head"], dtype=float), w)


# ---- nothing cut off, nothing jumps ------------------------------------------------------------

VIEWPORTS = {"narrow phone": (320, 640), "phone": (390, 844), "desktop": (1280, 900),
             "wide": (1920, 1080), "very wide": (2560, 1440)}


def load_preset(page, name):
    page.select_option("#preset", name)
    act(page, lambda: page.locator("#load-preset").click())


def layout_problems(page):
    return page.evaluate(LAYOUT_CHECK)


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
                assert shown.evaluate("() => document.getElementById('pitfall').value") == "", name
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
            act(shown, lambda: shown.select_option("#pitfall", "softmax_inside"))
            act(shown, lambda: shown.select_option("#variant", "gap"))
            assert layout_problems(shown) == [], name
            for table in ("pitfall-top-k", "variant-top-k"):
                box = shown.locator("#%s" % table).locator("xpath=..")
                assert box.is_visible(), (name, table)
                if width <= 600:
                    assert box.evaluate("s => s.scrollWidth <= s.clientWidth + 1"), \
                        "%s scrolls sideways at %d px" % (table, width)
            check_ranked_table_semantics(shown, "pitfall-top-k")
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
            'stage-logits', 'grid-input', 'prediction', 'pitfalls', 'variants', 'real-vit'].map((id) => {
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
        assert 0 < boxes["pitfalls"][1] - bottom < 40 and boxes["variants"][1] == boxes["pitfalls"][1], where
        assert boxes["real-vit"][1] > boxes["pitfalls"][3] and boxes["real-vit"][1] > height, where
    overview = page.locator("#overview")
    assert overview.is_visible() and "logits" in overview.inner_text()
    assert page.locator("#overview a").get_attribute("href") == "#real-vit"


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
    phone; on a wider screen each header stays on one line."""
    open_explorer(page, site_url)
    for name in ["narrow phone", "phone", "desktop"]:
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
        if width >= 760:
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
    assert page.locator("#pitfalls").is_hidden()
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


# ---- keyboard and screen readers ---------------------------------------------------------------

def test_tab_never_stops_in_a_chart_toolbar_and_focus_is_visible(page, site_url):
    open_explorer(page, site_url)
    page.locator("body").click(position={"x": 1, "y": 1})
    stops = []
    for _ in range(90):  # the toolbar's controls, then the grids
        page.keyboard.press("Tab")
        stops.append(page.evaluate("""() => { const e = document.activeElement;
            return [e.closest('.modebar') ? 'modebar' : '', e.tagName, e.id || e.getAttribute('aria-label') || ''] }"""))
    assert not [s for s in stops if s[0] == "modebar"]
    assert any(s[2].startswith("cls[") for s in stops) and any(s[2].startswith("W_head[") for s in stops)
    cell(page, "cls[0,0]").focus()
    ring = page.evaluate("getComputedStyle(document.activeElement).outlineColor")
    paper = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert contrast(rgb(ring), rgb(paper)) >= 3
    border = page.evaluate("getComputedStyle(document.getElementById('copy-link')).borderTopColor")
    assert contrast(rgb(border), rgb(paper)) >= 3


def test_every_heatmap_has_its_numbers_as_a_table(page, site_url):
    open_explorer(page, site_url)
    expected = {"heatmap-cls": CLS, "heatmap-w": W, "heatmap-logits": head(CLS, W)}
    mu = CLS.mean(axis=1, keepdims=True)
    expected["heatmap-normalized"] = (CLS - mu) / np.sqrt(((CLS - mu) ** 2).mean(1, keepdims=True) + 1e-6)
    for plot_id, matrix in expected.items():
        toggle = page.locator("#%s ~ details.numbers-toggle" % plot_id)
        toggle.locator("summary").click()
        # the table is built on the details' toggle event, a task after the click's
        toggle.locator("tbody tr").first.wait_for()
        rows = toggle.evaluate("""d => [...d.querySelectorAll('tbody tr')].map(
            tr => [...tr.querySelectorAll('td')].map(td => td.textContent))""")
        shown = np.array([[float(x) for x in row] for row in rows])
        np.testing.assert_allclose(shown, matrix, atol=5e-5, err_msg=plot_id)
        assert toggle.locator("th[scope=col]").count() == matrix.shape[1]


def test_a_large_heatmaps_numbers_are_read_a_window_at_a_time_without_a_mouse(page, site_url):
    """At ViT-B/16 size (h_hat 2 x 768, W_head 768 x 1000) "Show the numbers" lists 24 x 24 at a
    time; two fields, typed into, choose the window's first row and column, so every value can
    be read with the keyboard. Checked against LayerNorm written out here on the preset's CLS."""
    from pycore.explorer.presets import preset
    open_explorer(page, site_url)
    load_preset(page, "vit-b16")
    state = preset("vit-b16")
    cls, w = state.cls, state.W_head
    mu = cls.mean(axis=1, keepdims=True)
    h_hat = (cls - mu) / np.sqrt(((cls - mu) ** 2).mean(axis=1, keepdims=True) + 1e-6)
    for plot_id, matrix, row, col in (("heatmap-normalized", h_hat, 0, 700),
                                      ("heatmap-w", w, 750, 990)):
        toggle = page.locator("#%s ~ details.numbers-toggle" % plot_id)
        toggle.locator("summary").click()
        toggle.locator("tbody tr").first.wait_for()
        for name, value in (("row", row), ("col", col)):
            field = toggle.locator("input[name=%s]" % name)
            field.click()
            page.keyboard.press("Control+a")
            field.press_sequentially(str(value), delay=20)
            field.press("Tab")
        page.wait_for_function("""([id, r, c]) => {
            const d = document.querySelector('#' + id + ' ~ details.numbers-toggle');
            const th = d.querySelector('tbody th'), col = d.querySelector('thead th');
            return th && th.textContent.endsWith(' ' + r) && col && col.textContent.endsWith(' ' + c); }""",
                               arg=[plot_id, row, col])
        rows = toggle.evaluate("""d => [...d.querySelectorAll('tbody tr')].map(
            tr => [...tr.querySelectorAll('td')].map(td => td.textContent))""")
        want = matrix[row:row + 24, col:col + 24]
        np.testing.assert_allclose(np.array(rows, dtype=float), want, atol=5e-5, err_msg=plot_id)
        caption = toggle.locator("caption").inner_text()
        assert "rows %d to %d of %d" % (row, row + want.shape[0] - 1, matrix.shape[0]) in caption
        assert "columns %d to %d of %d" % (col, col + want.shape[1] - 1, matrix.shape[1]) in caption
        toggle.locator("summary").click()  # closed again, as the next test expects


def test_the_prediction_is_said_in_words_and_announced(page, site_url):
    open_explorer(page, site_url)
    region = page.locator("#prediction")
    said = page.locator("#prediction-said")
    assert said.get_attribute("aria-live") == "polite" and region.get_attribute("aria-live") is None
    logits = head(CLS, W)
    words = "; ".join("%s %d predicts class %d (logit %.4f)" % ("Sample" if b == 0 else "sample", b,
                                                                 int(np.argmax(row)), row.max())
                      for b, row in enumerate(logits)) + "."
    assert region.inner_text().startswith(words)
    page.wait_for_function("(w) => document.getElementById('prediction-said').textContent.startsWith(w)",
                           arg=words)
    # A constant row: every logit 0, a tie of all three classes, said as such.
    type_keys(page, "cls[1,0]", "1").press("Tab")
    for d in (1, 2, 3):
        type_keys(page, "cls[1,%d]" % d, "1").press("Tab")
    page.wait_for_function("() => document.getElementById('prediction').textContent.includes('tie')")
    text = region.inner_text()
    assert "Sample 1's features are all equal" in text and "classes 0, 1, 2 tie" in text


# Every live region's text changes from now on: [region id or role, text]. The observers of an
# earlier test on the same (reused) page are disconnected first, or each change would count twice.
WATCH_SAID = """() => {
    for (const o of window.__sayers || []) o.disconnect();
    window.__said = [];
    window.__sayers = Array.from(document.querySelectorAll('[aria-live], [role=alert], [role=status]'), (el) => {
        const o = new MutationObserver(() => window.__said.push([el.id || el.getAttribute('role'), el.textContent]));
        o.observe(el, { childList: true, characterData: true, subtree: true });
        return o;
    });
}"""


def test_an_edit_typed_key_by_key_is_said_once(page, site_url):
    """Typing "-1.25" into a cell and pressing Enter is one action: its result, the prediction,
    is said once when the typing is over; the fine-tuning panel's status, whose loss the edit
    changes too, is not said (once 4 announcements for this, the unrelated status among them)."""
    open_explorer(page, site_url)
    page.wait_for_timeout(800)  # what the page said as it opened is said
    page.evaluate(WATCH_SAID)
    type_keys(page, "cls[0,1]", "-1.25").press("Enter")
    page.wait_for_function("() => document.getElementById('prediction-said').textContent && "
                           "window.__said.length > 0")
    page.wait_for_timeout(1500)  # a calm second and more: nothing else is said
    said = page.evaluate("() => window.__said")
    assert [region for region, _ in said] == ["prediction-said"], said
    assert said[0][1] == page.inner_text("#prediction")


def test_a_refused_entry_is_shown_as_it_is_typed_and_said_once_when_it_ends(page, site_url):
    """Typing "abc" into a cell is refused at each key ('a', 'ab', 'abc' are not numbers): the
    alert box shows it and the cell is marked invalid, described by the box, but nothing is said
    until the entry ends; Enter then says it once (each key used to fire an assertive alert)."""
    open_explorer(page, site_url)
    page.wait_for_timeout(800)
    page.evaluate(WATCH_SAID)
    box = type_keys(page, "cls[0,0]", "abc")
    page.wait_for_function("() => document.getElementById('alert').textContent.includes(\"'abc'\")")
    assert alert_text(page) == "cls[0,0]: 'abc' is not a number"
    assert box.get_attribute("aria-invalid") == "true"
    assert box.get_attribute("aria-describedby") == "alert"
    page.wait_for_timeout(700)
    assert page.evaluate("() => window.__said") == []
    box.press("Enter")
    page.wait_for_function("() => window.__said.length > 0")
    page.wait_for_timeout(1000)
    assert page.evaluate("() => window.__said") == [["alert-said", "cls[0,0]: 'abc' is not a number"]]
    assert alert_text(page) == "cls[0,0]: 'abc' is not a number"


def test_dimension_labels_are_words(page, site_url):
    open_explorer(page, site_url)
    for dim, word in (("B", "samples"), ("D", "features"), ("C", "classes")):
        name = page.locator("#dim-" + dim).evaluate(
            "e => (e.labels && e.labels[0] ? e.labels[0].textContent : e.getAttribute('aria-label') || '')")
        assert word in name.lower(), (dim, name)


# axe-core (every WCAG 2.x A and AA rule, in Chromium, Firefox and WebKit, in each state):
# tests/browser/test_engines.py, App.assert_axe_clean; docs/accessibility-checks.md.


# ---- the boot tells the truth ------------------------------------------------------------------

@pytest.mark.fresh_context  # its subject is the boot (and its routes must see every download)
@pytest.mark.hosts("pyscript", "fallback")
def test_while_python_loads_cells_show_the_link_and_refuse_typing(page, site_url, site_host):
    """Hold the runtime's biggest download: meanwhile the grids show the link's own numbers,
    read-only, typing there says why, and the progress counts megabytes."""
    held = []
    page.add_init_script("""
        window.__bootTexts = [];
        new MutationObserver(() => {
          const el = document.getElementById("boot-status");
          if (el) window.__bootTexts.push(el.textContent);
        }).observe(document, {subtree: true, childList: true, characterData: true});
    """)
    wasm = re.compile(r"\.wasm(\.gz)?$")  # the PyScript host serves it gzipped
    page.route(wasm, lambda route: held.append(route))
    # The fallback host's other large download is held too until the page's script listens:
    # statuses said before then are shown at once, only the newest, and a quick download's
    # "x of y MB" would be replaced by "Starting Python" unseen (CI saw this under load).
    data, data_held = re.compile(r"pyodide\.asm\.data$"), []
    if site_host == "fallback":
        page.route(data, lambda route: data_held.append(route))
    state = {"cls": [[1.5, 2, 3, 4], [4, 3, 2, 1]], "W_head": W.tolist()}
    page.goto(site_url + "index.html" + state_fragment(state))
    page.wait_for_function("() => document.querySelector('[aria-label=\"cls[0,0]\"]') !== null")
    deadline = time.monotonic() + 60
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert held, "the runtime's .wasm was never requested"
    box = cell(page, "cls[0,0]")
    assert box.input_value() == "1.5" and box.evaluate("e => e.readOnly")
    assert page.locator("#dim-D").input_value() == "4"
    box.click()
    box.press("7")
    page.wait_for_function("() => document.getElementById('toast').textContent.length > 0")
    assert "still starting" in page.locator("#toast").inner_text()
    assert box.input_value() == "1.5"
    for route in data_held:
        route.continue_()
    # the progress comes from the runtime's other downloads as they stream in: wait for it (the
    # .wasm is still held), then check what was shown
    page.wait_for_function(r"() => window.__bootTexts.some(t => /\d+\.\d of \d+\.\d MB/.test(t))",
                           timeout=30000)
    texts = page.evaluate("window.__bootTexts")
    assert any(re.search(r"\d+\.\d of \d+\.\d MB", t) for t in texts), texts
    for route in held:
        route.continue_()
    page.unroute(wasm)
    wait_ready(page, BOOT_TIMEOUT_MS)
    assert not box.evaluate("e => e.readOnly")
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               head(np.array(state["cls"]), W), atol=1e-12)


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
    """The page reads its text colour once per colour scheme (js/dom.js), not per figure: when
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


def _wrapped(title, width, size):
    """The titles' wrapping rule (js/heatmaps.js wrapTitle): greedy, at spaces, at most
    floor((width - 12 - 34) / (0.6 * size)) characters per line (at least 16), clear of the
    "Download figure" button (34 px: js/figure-menu.js)."""
    per_line = max(16, (width - 12 - 34) // (0.6 * size))
    lines, line = [], ""
    for word in title.split():
        if line and len(line) + 1 + len(word) > per_line:
            lines.append(line)
            line = word
        else:
            line = line + " " + word if line else word
    return "<br>".join(lines + [line])


def test_titles_are_wrapped_for_the_width_their_figure_has_now(page, site_url):
    """The heatmaps take their width from a ResizeObserver, not by measuring as they draw
    (docs/performance.md): a figure whose width changes after it was drawn (large text moves the
    layout) is drawn again when its title would wrap differently. Checked against the rule,
    applied to each figure's width as the page has it after the toggle, both ways."""
    open_explorer(page, site_url)
    titles = """() => [...document.querySelectorAll('.plot')]
        .filter(e => e.data && e.layout && e.layout.title && e.dataset.bitmap !== undefined)
        .map(e => [e.id, e.clientWidth, e.layout.title.text, e.layout.title.font.size])"""
    for width, height in [(800, 600), (390, 844)]:
        set_viewport(page, {"width": width, "height": height})
        for step in ("large", "normal"):
            page.locator("#text-size").click()
            page.wait_for_function("want => document.documentElement.classList.contains('large') === want",
                                   arg=step == "large")
            page.wait_for_timeout(1500)  # the figures redraw; a changed width is seen a frame later
            shown = page.evaluate(titles)
            assert len(shown) >= 4
            stale = [(id_, w, text) for id_, w, text, size in shown
                     if text != _wrapped(text.replace("<br>", " "), w or 600, size)]
            assert stale == [], (width, step)
