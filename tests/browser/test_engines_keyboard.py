"""Accessibility (issue 46) in three engines, on the page test_engines.py boots (PyScript host:
the markup is the same on both), by keyboard: a keyboard-only tour of the figures with the names
and values the accessibility tree reads for them, and no Tab stop hidden behind the walk-through
or a notice (Chromium's tours: test_page_walk.py). What is seen and said is
test_engines_access.py, whose recorder of what is said this file uses too."""
import re

import numpy as np
import pytest

from .engines import EngineError
from .engines.app import BEYOND_CHROMIUM, CLS, PAGE, W, head, settle_layout
from .engines.kit import heatmap_z, load_state, renders, wait_render_after
from .finetunekit import sgd
from .test_engines_access import (QUIET_SPELLS, RECORD_ACTIVITY, SAID, quiet, record,
                                  said_settled)
from .test_engines_panels import IDLE, PAD_IN_VIEW, check_digit_shown, pad_pixels

pytestmark = [pytest.mark.browser]

# ---- a keyboard-only tour of the figures, and what the accessibility tree reads -------------

# An element's accessible name as a screen reader gets it here: aria-labelledby's elements' text,
# else aria-label, else the text of its <label>s.
NAMES = """(selectors) => selectors.map((s) => {
    const el = document.querySelector(s);
    if (!el) return null;
    const by = el.getAttribute('aria-labelledby');
    const name = by ? by.split(/\\s+/).map((id) => document.getElementById(id).textContent).join(' ')
        : el.getAttribute('aria-label') || (el.labels ? [...el.labels].map((l) => l.textContent).join(' ') : '');
    return { role: el.getAttribute('role') || el.tagName.toLowerCase(),
             roledescription: el.getAttribute('aria-roledescription'), name: name.replace(/\\s+/g, ' ').trim(),
             live: el.getAttribute('aria-live') };
})"""
# What each heatmap shows beside its drawing: its title, its size, its colour key's words.
HEATMAP_SHOWN = """(ids) => ids.map((id) => { const el = document.getElementById(id);
    const key = el.nextElementSibling;
    return { title: el.querySelector('.gtitle').textContent, rows: el.data[0].z.length,
             cols: el.data[0].z[0].length, key: [...key.children].map((s) => s.textContent) }; })"""
FOCUSED = "() => document.activeElement.id || document.activeElement.dataset.format || document.activeElement.getAttribute('aria-label')"
HEATMAPS = ("heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits")


def squeeze(text):
    return re.sub(r"\s+", "", text)


@PAGE
def test_a_keyboard_only_tour_of_the_figures_and_their_names(app):
    """WCAG 2.1.1 and 4.1.2 in every engine (Chromium's own: test_page_linked.py,
    test_page_figures.py, test_page_realvit.py, test_page_finetune_play.py): the logits heatmap
    by arrows, a figure's Download menu by keys, the drawing pad by keys (its reading said once
    it is still), Step and the loss chart's readout by keys; and each figure's role, accessible
    name and live readout against what the page shows and NumPy."""
    engine = app.start()
    _, logits = head(CLS, W)
    # the heatmaps: named by the title shown, their size and their colour key's ends; the logits
    # one an application that takes arrows; each colour key a named image
    names = engine.evaluate(NAMES, ["#" + f for f in HEATMAPS] + ["#%s + .colour-key" % f for f in HEATMAPS])
    for figure, got, key, shown in zip(HEATMAPS, names, names[4:], engine.evaluate(HEATMAP_SHOWN, list(HEATMAPS))):
        low, mid, high = shown["key"]
        assert squeeze(got["name"]).startswith(squeeze(shown["title"]) + ":"), (got, shown)
        assert ("a heatmap of %d by %d values, colours from %s to %s." % (
            shown["rows"], shown["cols"], low, high)) in got["name"], (got, shown)
        keys = figure == "heatmap-logits"
        assert (got["role"], got["roledescription"]) == (("application", "heatmap") if keys else ("img", None))
        assert ("Arrow keys choose a logit" in got["name"]) == keys
        assert (key["role"], key["name"]) == ("img", "Colour key: %s to %s, %s in the middle" % (low, high, mid))
    assert [list(heatmap_z(engine, f).shape) for f in HEATMAPS] == [
        [n["rows"], n["cols"]] for n in engine.evaluate(HEATMAP_SHOWN, list(HEATMAPS))]

    # the logits heatmap: Enter, then arrows choose a logit; its terms are titled (a live region)
    engine.evaluate("() => document.getElementById('heatmap-logits').focus()")
    for key, where in (("Enter", "0,0"), ("ArrowRight", "0,1"), ("ArrowDown", "1,1"),
                       ("ArrowDown", "1,1"), ("ArrowRight", "1,2")):
        engine.press(key)
        engine.wait_for("(w) => document.getElementById('contributions').dataset.logit === w", where)
    title = engine.evaluate(NAMES, ["#contributions", "#contributions-title"])
    assert "logit[1, 2] = %.4f" % logits[1, 2] in title[0]["name"], title
    assert title[1]["live"] == "polite"
    engine.press("Escape")
    engine.wait_for("() => document.getElementById('contributions').hidden")

    # a figure's Download menu: Enter opens it on its first item, arrows and End move, Esc closes
    # it and gives the focus back, ArrowUp opens it on its last item, Tab leaves and closes it
    menu = "() => !document.getElementById('heatmap-w-download-menu').hidden"
    engine.evaluate("() => document.getElementById('heatmap-w-download').focus()")
    got = engine.evaluate(NAMES, ["#heatmap-w-download", "#heatmap-w-download-menu"])
    assert got[0]["name"] == "Download figure: " + re.sub(r"\s+", " ", engine.evaluate(
        "() => document.getElementById('heatmap-w').vitHover.spec.title")).strip()
    assert got[1]["role"] == "menu"
    for key, is_open, focused in (("Enter", True, "png"), ("ArrowDown", True, "projector"),
                                  ("End", True, "svg"), ("ArrowDown", True, "png"),
                                  ("Escape", False, "heatmap-w-download"), ("ArrowUp", True, "svg")):
        engine.press(key)
        try:
            engine.wait_for("(open, focused) => !document.getElementById('heatmap-w-download-menu').hidden === open"
                            " && (%s)() === focused" % FOCUSED, is_open, focused, timeout=5)
        except EngineError:
            raise AssertionError("after %s: menu open %r, focus on %r" % (
                key, engine.evaluate(menu), engine.evaluate(FOCUSED)))
    engine.press("Tab")
    engine.wait_for("() => document.getElementById('heatmap-w-download-menu').hidden", timeout=5)

    # the drawing pad: a grid of 64 cells named by their ink; arrows move, Space and Enter paint,
    # 0-9 set the ink, Delete erases; the tiny ViT reads the drawing (tests/reference_vit.py)
    from reference_vit import ShippedViT
    model = ShippedViT()
    engine.evaluate(PAD_IN_VIEW)
    pad = engine.evaluate(NAMES, ["#digit-pad"])[0]
    assert (pad["role"], pad["name"]) == ("grid", "Drawing grid: 8 by 8 pixels, ink 0 to 16")
    engine.evaluate("() => document.querySelector('#digit-pad [role=gridcell]').focus()")
    assert engine.evaluate(FOCUSED) == "pixel 0,0: 0"
    said_settled(engine)  # the worked example's prediction, loaded by start(), said before this
    record(engine)
    engine.evaluate(RECORD_ACTIVITY)
    for key in ("ArrowRight", "ArrowRight", "ArrowDown", "Space", "ArrowDown", "5", "ArrowRight",
                "Enter", "Delete", "ArrowDown", "9"):
        engine.press(key)
    engine.wait_for("""() => document.getElementById('digit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'
        && Number(document.querySelectorAll('#digit-pad [role=gridcell]')[27].dataset.value) === 16""")
    # the strokes change the tiny ViT's reading and the pipeline's prediction (its input is the
    # drawing now): the reading alone is said, once per quiet spell of the page (once about 21
    # messages for 8 pixels, then the prediction said beside the reading)
    quiet(engine, 800)
    said, spells = engine.evaluate(SAID), engine.evaluate(QUIET_SPELLS)
    assert said and {region for region, _ in said} == {"digit-said"}, said
    assert len(said) <= spells, (said, spells)
    assert said[-1][1] == engine.evaluate("() => document.getElementById('digit-prediction').textContent")
    expected = np.zeros((8, 8))
    expected[1, 2], expected[2, 2], expected[3, 3] = 16, 9, 16
    np.testing.assert_array_equal(pad_pixels(engine), expected)
    assert engine.evaluate(FOCUSED) == "pixel 3,3: 16"
    check_digit_shown(engine, model)
    engine.press("Tab")  # one Tab stop: on to Erase, then Clear, by keys
    assert engine.evaluate(FOCUSED) == "digit-erase"
    engine.press("Tab")
    before = renders(engine)
    engine.press("Enter")  # Clear: the next scenarios start from a blank pad
    wait_render_after(engine, before)
    engine.wait_for("""() => Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'))
        .every((c) => Number(c.dataset.value) === 0) && document.getElementById('digit').dataset.drawing === 'done'""")

    # fine-tuning by keys: Step twice, then the loss chart's readout by End, arrows and Home
    load_state(engine, {"cls": CLS.tolist(), "W_head": W.tolist()})
    y = [int(v) for v in engine.evaluate(
        "() => Array.from(document.querySelectorAll('#ft-labels input'), (i) => i.value)")]
    losses, _ = sgd(CLS, y, W, 0.1, 2)
    engine.evaluate("() => document.getElementById('ft-step').focus()")
    for n in (1, 2):
        engine.press("Enter")
        engine.wait_for("(n) => Number(document.getElementById('finetune').dataset.runSteps) === n", n, timeout=60)
        engine.wait_for(IDLE, timeout=60)
    # its name (the curves' summary) as a screen reader gets it on focus: while the curves
    # change it follows them at most once a second (js/figure/line-chart.js), on focus at once
    engine.evaluate("() => document.querySelector('#loss-curve svg.chart-plot').focus()")
    chart = engine.evaluate(NAMES, ["#loss-curve svg.chart-plot", "#loss-curve .chart-readout"])
    assert (chart[0]["role"], chart[0]["roledescription"]) == ("application", "chart")
    assert "%.4g at step 0" % losses[0] in chart[0]["name"] and "%.4g at step 2" % losses[2] in chart[0]["name"], chart
    assert chart[1]["live"] == "polite"
    readout = "() => document.querySelector('#loss-curve .chart-readout').textContent"
    for key, at in (("End", 2), ("ArrowLeft", 1), ("Home", 0), ("ArrowRight", 1)):
        engine.press(key)
        m = re.fullmatch(r"step (\d+): loss \(cross-entropy\) ([\d.e+-]+), accuracy \(%\) ([\d.]+)",
                         engine.evaluate(readout))
        assert m and int(m.group(1)) == at and float(m.group(2)) == pytest.approx(losses[at], rel=1e-3), (key, m)
    engine.press("Tab")  # leaving the chart takes its readout away
    assert engine.evaluate(readout) == ""
    app.assert_clean()


# ---- no Tab stop hidden behind a panel or a notice ------------------------------------------

# The focused element, whether any of it is on screen: inside the window and not under a layer
# over the window's bottom that it is not in: the walk-through's panel pinned at the bottom edge,
# or a notice shown (fixed just above that edge); whether the focus is in the page, and whether
# the page's document has the focus. test_page_walk.py's Chromium tours read its first two.
TAB_STOP = """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
    const el = document.activeElement;
    const r = el.getBoundingClientRect();
    let top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
    for (const layer of document.querySelectorAll('.walk[data-active="true"], .notices > :not([hidden])')) {
        if (layer.contains(el)) continue;
        const L = layer.getBoundingClientRect();
        const notice = layer.parentElement.classList.contains('notices');
        if (L.height && L.left < r.right && L.right > r.left && (notice || L.bottom >= innerHeight - 2))
            bottom = Math.min(bottom, L.top);
    }
    done([el.getAttribute('aria-label') || el.id || el.textContent.trim().slice(0, 30) || el.tagName,
          r.width > 0 && bottom - top > 0, el !== document.body, document.hasFocus()]);
})))"""
# Where the focused element is, the walk-through's panel and the alert (said when a stop is hidden).
WHERE = """() => { const box = (e) => { const r = e.getBoundingClientRect();
        return [r.left, r.top, r.width, r.height].map(Math.round); };
    return { el: box(document.activeElement), walk: box(document.getElementById('walk')),
             alert: box(document.getElementById('alert')), window: [innerWidth, innerHeight, scrollY] }; }"""


def tab_tour(engine):
    """Tab from the skip link through the page (90 presses at most): the names of the stops, and
    those entirely hidden (with where they were)."""
    engine.evaluate("() => { document.querySelector('a.skip').focus(); window.scrollTo(0, 0); }")
    hidden, seen = [], set()
    for _ in range(90):
        engine.press("Tab")
        name, visible, in_page, focused = engine.evaluate(TAB_STOP)
        if not in_page or (engine.name == "firefox" and not focused):
            # past the page's last stop, to the browser's own controls: headless Firefox then
            # sends the page no focus events until its window is focused again (the next
            # scenarios need them), and a person's Tab from there starts at the top again.
            # (WebKitGTK under Xvfb, without a window manager, may say its document has no
            # focus while it has: its focused element says.)
            break
        seen.add(name)
        if not visible:
            hidden.append((name, engine.evaluate(WHERE)))
    return seen, hidden


def end_tour(engine):
    """At 390 px the Tab stops scrolled the grids sideways: back to their first cells, which the
    page's own reset (a link) leaves alone."""
    engine.evaluate("""() => document.querySelectorAll('.grid-body')
        .forEach((e) => { e.scrollTop = 0; e.scrollLeft = 0; })""")


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_walk.py::test_no_tab_stop_is_hidden_behind_the_walk_through
@pytest.mark.parametrize("size", [(1280, 720), (390, 844)])
def test_no_tab_stop_is_hidden_behind_the_walk_through(app, size):
    """WCAG 2.4.11, in Firefox and WebKit: with the walk-through's panel pinned over the window's bottom, every Tab stop
    from the top of the page is at least partly on screen when it has the focus (once 32 of 60
    at 1280 x 720 were entirely behind the panel). MiniBrowser keeps WebKit's window 460 px wide
    at least (engines/webkit.py)."""
    engine = app.start(viewport=size)
    settle_layout(engine)
    before = renders(engine)
    engine.click("#walk-start")
    wait_render_after(engine, before)
    engine.wait_for("() => document.getElementById('walk').dataset.active === 'true'")
    seen, hidden = tab_tour(engine)
    assert len(seen) > 40, seen  # the tour went through the page
    assert hidden == [], hidden
    assert engine.evaluate("() => document.getElementById('walk').dataset.active") == "true"
    before = renders(engine)
    engine.click("#walk-start")  # ends it
    wait_render_after(engine, before)
    end_tour(engine)
    app.assert_clean()


@PAGE
def test_no_tab_stop_is_hidden_behind_the_alert_on_a_phone(app):
    """WCAG 2.4.11 with a notice shown: the alert of a refused link stays until the next action,
    floating over the bottom of the window; on a phone it is as wide as the window. Every Tab
    stop from the top is at least partly clear of it when it has the focus (before, 31 stops were
    under it at 390 x 844 in Firefox, some entirely: Walk-through, Large text, W_head[0,0]; the
    page scrolled clear of the walk-through only)."""
    engine = app.start(viewport=(390, 844))
    settle_layout(engine)
    engine.evaluate("() => { location.hash = 'state=%7B'; }")  # a link cut short: refused
    engine.wait_for("() => !document.getElementById('alert').hidden")
    seen, hidden = tab_tour(engine)
    assert len(seen) > 40, seen
    assert hidden == [], hidden
    assert not engine.evaluate("() => document.getElementById('alert').hidden")
    end_tour(engine)
    load_state(engine, {"cls": CLS.tolist(), "W_head": W.tolist()})  # the next action: it goes
    engine.wait_for("() => document.getElementById('alert').hidden")
    app.assert_clean()
