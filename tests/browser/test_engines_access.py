"""Accessibility (issue 46) in three engines, on the page test_engines.py boots (PyScript host:
the markup is the same on both): the numbers painted on heatmap cells measured from the
canvas's pixels, what is announced per action, a keyboard-only tour of the figures with the
names and values the accessibility tree reads for them, and no Tab stop hidden behind the
walk-through or a notice. Forced colours in
Firefox, a browser of its own (Chromium: test_page_forced_colours.py; WebKitGTK has no forced
colours mode: docs/accessibility-checks.md). Expected values: NumPy and WCAG's formulas written
out in the tests (kit.contrast; tests/browser/finetunekit.py)."""
import re

import numpy as np
import pytest

from .engines import EngineError, launch
from .engines.app import CLS, W, head, settle_layout
from .engines.kit import (cell, contrast, edit, heatmap_z, load_state, luminance, renders,
                          rgb, wait_ready, wait_render_after)
from .finetunekit import sgd
from .test_engines_panels import IDLE, PAD_IN_VIEW, check_digit_shown, pad_pixels
from .test_page_forced_colours import STYLES

pytestmark = [pytest.mark.browser]
# the markup is the same on both hosts: the PyScript host's page only
PYSCRIPT = pytest.mark.parametrize("engine_host", ["pyscript"], indirect=True)

WAIT = "(ms) => new Promise((r) => setTimeout(r, ms))"


def quiet(engine, ms):
    """Let `ms` pass in the page: what is said after an action is said once the page has been
    quiet for 700 ms (js/page/announce.js); waiting past that shows that nothing more comes."""
    engine.evaluate(WAIT, ms)


def said_settled(engine):
    """Wait until the prediction shown is the one said (the link loaded said it, or had nothing
    new to say)."""
    engine.wait_for("() => document.getElementById('prediction-said').textContent"
                    " === document.getElementById('prediction').innerText")


# ---- the numbers painted on the cells, measured from the canvas ----------------------------

# Per cell of a heatmap's canvas (its inner 80 %, clear of the neighbours' edges): the colour most
# of its pixels have (the cell's own), the darkest and the lightest pixel (the number's ink is one
# of them) and how many pixels differ from the cell's colour. Only pixels are chosen here; the
# contrast is computed in Python.
CELL_PIXELS = """(id) => {
    const el = document.getElementById(id), view = el.parentElement.querySelector('canvas.heatmap-bitmap');
    const rows = el.data[0].z.length, cols = el.data[0].z[0].length;
    const ctx = view.getContext('2d'), cw = view.width / cols, ch = view.height / rows;
    const cells = [];
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
        const x = Math.round((c + 0.1) * cw), y = Math.round((r + 0.1) * ch);
        const w = Math.round(cw * 0.8), h = Math.round(ch * 0.8);
        const d = ctx.getImageData(x, y, w, h).data;
        const counts = new Map();
        let dark = null, light = null;
        const sum = (i) => d[i] + d[i + 1] + d[i + 2];
        for (let i = 0; i < d.length; i += 4) {
            const k = d[i] + ',' + d[i + 1] + ',' + d[i + 2];
            counts.set(k, (counts.get(k) || 0) + 1);
            if (dark === null || sum(i) < sum(dark)) dark = i;
            if (light === null || sum(i) > sum(light)) light = i;
        }
        const [back, n] = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a));
        cells.push({ r, c, z: el.data[0].z[r][c], back: back.split(',').map(Number),
                     dark: [d[dark], d[dark + 1], d[dark + 2]], light: [d[light], d[light + 1], d[light + 2]],
                     inked: w * h - n });
    }
    return cells;
}"""


@PYSCRIPT
def test_painted_numbers_contrast_with_their_cells_measured_from_pixels(app):
    """WCAG 1.4.3 for the numbers a canvas paints on heatmap cells, which axe cannot see: on
    every cell of five heatmaps (the red-blue scale of the inputs, h_hat, W_head and the logits,
    the softmax scale of the probabilities), a number is painted, and its ink (the cell's pixel
    farthest from the cell's colour) stands at least 4.5:1 against the cell's colour, dark cells
    and light ones. Once 6 of 40 were under 4.5:1 (logits[0,0] 3.35:1; white on #63a5cd, 2.69:1).
    Measured at 2560 x 1440, where every cell of these inputs holds its number: at 1280 x 720
    stage 2 shares a row with the editors' grids and h_hat's six cells are narrower than the
    40 px a number needs (js/heatmap/draw.js, textInCells), so the page paints none there
    and its "Show the numbers" table reads them instead (at 1920 x 1080, Firefox's eight logits
    were still too narrow for theirs)."""
    engine = app.start(viewport=(2560, 1440))
    settle_layout(engine)
    quiet(engine, 400)  # the figures drawn again for the new width once it has held for 250 ms
    rng = np.random.RandomState(46)  # inputs whose logits and probabilities spread over the scales
    cls, w = np.round(rng.standard_normal((2, 6)) * 2, 2), np.round(rng.standard_normal((6, 8)), 2)
    load_state(engine, {"cls": cls.tolist(), "W_head": w.tolist()})
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w)[1], atol=1e-12)
    measured = []
    for figure in ("heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits", "heatmap-probs"):
        engine.evaluate("(id) => document.getElementById(id).scrollIntoView({block: 'center'})", figure)
        engine.wait_for("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        # each figure painted with its numbers (cells still bare after 10 s are reported below,
        # by their pixels)
        try:
            engine.wait_for("(id) => { const el = document.getElementById(id), z = el.data[0].z;"
                            " return el.dataset.cellNumbers === String(z.length * z[0].length); }",
                            figure, timeout=10.0)
        except EngineError:
            pass
        engine.wait_for("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        for c in engine.evaluate(CELL_PIXELS, figure):
            ink = max((c["dark"], c["light"]), key=lambda p: contrast(p, c["back"]))
            measured.append((figure, c["r"], c["c"], c["z"], c["back"], ink, c["inked"],
                             round(contrast(ink, c["back"]), 2)))
    unpainted = [m for m in measured if m[6] < 8]
    assert unpainted == [], unpainted  # every cell shows its number
    low = [m for m in measured if m[7] < 4.5]
    assert low == [], low
    # dark cells with light numbers and light cells with dark ones, and the middle tones between,
    # where the ink changes side
    inks = [luminance(m[5]) for m in measured]
    backs = [luminance(m[4]) for m in measured]
    assert min(inks) < 0.05 and max(inks) > 0.9, sorted(inks)
    assert any(0.15 < b < 0.4 for b in backs), sorted(backs)
    print("%s: %d painted numbers, contrast %.2f:1 at least (%s)" % (
        engine.name, len(measured), min(m[7] for m in measured),
        min(measured, key=lambda m: m[7])[:6]))
    app.assert_clean()


# ---- what is said, per action ----------------------------------------------------------------

# Every live region's text changes from now on: [region id or role, text, page time in ms]
# (the observers of an earlier call are disconnected first).
RECORD_SAID = """() => {
    for (const o of window.__sayers || []) o.disconnect();
    window.__said = [];
    window.__sayers = Array.from(document.querySelectorAll('[aria-live], [role=alert], [role=status]'), (el) => {
        const o = new MutationObserver(() => window.__said.push([el.id || el.getAttribute('role'),
                                                                 el.textContent, performance.now()]));
        o.observe(el, { childList: true, characterData: true, subtree: true });
        return o;
    });
}"""
SAID = "() => window.__said.map(([region, text]) => [region, text])"


def record(engine):
    engine.evaluate(RECORD_SAID)


# The page's activity from now on: the times of each key pressed and each change of what the
# drawing's reading or the prediction shows. QUIET_SPELLS counts the spells of activity separated
# by more than the 700 ms of quiet after which a result is said (js/page/announce.js): a budget of one
# announcement each, whatever the pace of the keys and answers under load.
RECORD_ACTIVITY = """() => {
    const watching = Boolean(window.__activity);
    window.__activity = [];
    if (watching) return;
    const note = () => window.__activity.push(performance.now());
    document.addEventListener('keydown', note, true);
    for (const id of ['digit-prediction', 'prediction'])
        new MutationObserver(note).observe(document.getElementById(id),
                                           { childList: true, characterData: true, subtree: true });
}"""
QUIET_SPELLS = """() => window.__activity.length === 0 ? 0
    : 1 + window.__activity.slice(1).filter((t, i) => t - window.__activity[i] > 700).length"""


@PYSCRIPT
@pytest.mark.parametrize("engine_name", ["firefox", "webkit"], indirect=True)
def test_each_action_is_said_once_and_play_at_a_calm_rate(app):
    """WCAG 4.1.3, as heard through the live regions, in Firefox and WebKit (Chromium's own, in
    Playwright: test_page_keyboard.py, test_page_walk.py, test_page_finetune_play.py): an edit typed key by key is said once, its
    prediction, and nothing else; a refused entry nothing while typed, then one alert; a
    walk-through step once, its title and note; Play at most once every 5 s of its run and once
    where it pauses. Once: 2-4 announcements an edit, an alert a key, 22 messages in 2.5 s of
    Play. Then axe-core on the fine-tuning panel after Play."""
    engine = app.start()
    said_settled(engine)
    record(engine)
    engine.click(cell("cls[0,0]"))
    engine.type_keys("abc")
    try:
        engine.wait_for("() => document.getElementById('alert').textContent.includes(\"'abc'\")")
    except EngineError as e:
        raise EngineError("%s; focused %r holding %r" % (e, *engine.evaluate(
            "() => [document.activeElement.getAttribute('aria-label') || document.activeElement.id,"
            " document.activeElement.value]")))
    quiet(engine, 800)
    assert engine.evaluate(SAID) == []  # nothing while it is typed
    engine.press("Enter")
    engine.wait_for("() => window.__said.length > 0")
    quiet(engine, 800)
    assert engine.evaluate(SAID) == [["alert-said", "cls[0,0]: 'abc' is not a number"]]
    assert engine.evaluate("() => document.getElementById('alert').textContent") == "cls[0,0]: 'abc' is not a number"

    load_state(engine, {"cls": CLS.tolist(), "W_head": W.tolist()})
    said_settled(engine)
    record(engine)
    edit(engine, "cls[0,1]", "-1.25", then="Enter")
    engine.wait_for("() => window.__said.length > 0")
    quiet(engine, 800)
    said = engine.evaluate(SAID)
    assert [region for region, _ in said] == ["prediction-said"], said
    assert said[0][1] == engine.evaluate("() => document.getElementById('prediction').innerText")

    load_state(engine, {"cls": CLS.tolist(), "W_head": W.tolist()})
    said_settled(engine)
    before = renders(engine)
    engine.click("#walk-start")
    wait_render_after(engine, before)
    engine.wait_for("() => document.activeElement.id === 'walk-next'")
    engine.wait_for("() => document.getElementById('walk-said').textContent.startsWith('Step 1 of 7')")
    record(engine)
    before = renders(engine)
    engine.press("ArrowRight")
    wait_render_after(engine, before)
    engine.wait_for("() => window.__said.length > 0")
    quiet(engine, 800)
    title, note = engine.evaluate("() => ['walk-title', 'walk-note'].map((id) => document.getElementById(id).innerText)")
    assert title.startswith("Step 2 of 7: ")
    assert engine.evaluate(SAID) == [["walk-said", ("%s. %s" % (title, note)).strip()]]
    before = renders(engine)
    engine.click("#walk-start")  # ends it
    wait_render_after(engine, before)

    quiet(engine, 800)
    record(engine)
    start = engine.evaluate("() => performance.now()")
    engine.click("#ft-play")
    # 2.5 s of Play (once 22 messages), or until it stops by itself, converged
    engine.wait_for("(t) => performance.now() - t > 2500 || "
                    "document.getElementById('finetune').dataset.playing === 'false'", start, timeout=60)
    if engine.evaluate("() => document.getElementById('finetune').dataset.playing") == "true":
        engine.click("#ft-play")  # Pause
    engine.wait_for(IDLE, timeout=60)
    end = engine.evaluate("() => performance.now()")
    quiet(engine, 800)
    said = engine.evaluate("() => window.__said")
    panel = [s for s in said if s[0] == "ft-said"]
    others = [s[:2] for s in said if s[0] != "ft-said"]
    # the prediction the trained head makes, once, is the only other thing said
    assert [region for region, _ in others] in ([], ["prediction-said"]), said
    assert panel and panel[-1][1] == engine.evaluate("() => document.getElementById('ft-status').innerText")
    during = panel[:-1]  # before the pause's
    assert len(during) <= 1 + int((end - start) // 5000), (end - start, said)
    assert all(b[2] - a[2] >= 4900 for a, b in zip(during, during[1:])), said
    print("%s: Play %.1f s, %d steps: %d said by the panel, %d else" % (
        engine.name, (end - start) / 1000, int(engine.evaluate(
            "() => Number(document.getElementById('finetune').dataset.runSteps)")), len(panel), len(others)))
    app.assert_axe_clean("fine-tuning after Play, paused")
    app.assert_clean()


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


@PYSCRIPT
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
    chart = engine.evaluate(NAMES, ["#loss-curve svg.chart-plot", "#loss-curve .chart-readout"])
    assert (chart[0]["role"], chart[0]["roledescription"]) == ("application", "chart")
    assert "%.4g at step 0" % losses[0] in chart[0]["name"] and "%.4g at step 2" % losses[2] in chart[0]["name"], chart
    assert chart[1]["live"] == "polite"
    engine.evaluate("() => document.querySelector('#loss-curve svg.chart-plot').focus()")
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


# Every engine: an engine left out here (Chromium, which test_page_walk.py tours) would have to
# be another parametrization of the session's `engine_name`, which boots the pages again.
@PYSCRIPT
@pytest.mark.parametrize("engine_name", ["firefox", "webkit"], indirect=True)  # Chromium's: test_page_walk.py
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


@PYSCRIPT
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


# ---- forced colours in Firefox (Chromium: test_page_forced_colours.py) -----------------------

def test_colour_that_is_content_survives_forced_colours_in_firefox(reporting_sites):
    """Firefox set to use its own colours in place of the page's (browser.display.document_color_use
    = 2: forced colours, as Windows High Contrast does; engines/firefox.py), a browser of its own:
    the drawn digit, the colour keys, a softmax bar and the loss curves keep their meaning, as in
    Chromium's emulation."""
    try:
        engine = launch("firefox", forced_colours=True)
    except EngineError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        engine.goto(reporting_sites.url("pyscript") + "index.html")
        wait_ready(engine)
        assert engine.evaluate("() => matchMedia('(forced-colors: active)').matches")
        engine.evaluate(PAD_IN_VIEW)
        before = renders(engine)
        engine.click("#digit-gallery .digit-thumb")
        wait_render_after(engine, before)
        engine.wait_for("() => document.getElementById('digit').dataset.drawing === 'done'")
        engine.evaluate("() => document.getElementById('ft-step').scrollIntoView({block: 'center'})")
        engine.click("#ft-step")
        engine.wait_for("() => Number(document.getElementById('finetune').dataset.runSteps) >= 1", timeout=60)
        engine.wait_for(IDLE, timeout=60)
        s = engine.evaluate(STYLES)
        # the page's background in forced colours: the system's Canvas colour (Firefox leaves
        # the body's own background transparent over it)
        canvas = rgb(engine.evaluate("""() => { const d = document.createElement('div');
            d.style.cssText = 'forced-color-adjust: none; background-color: Canvas';
            document.body.append(d); const c = getComputedStyle(d).backgroundColor; d.remove(); return c; }"""))
        assert len(s["pad"]) >= 3, s["pad"]  # the digit in several greys
        assert "gradient" in s["key"], s["key"]  # the colour keys keep their gradient
        assert s["fillWidth"] > 0 and contrast(rgb(s["fill"]), rgb(s["track"])) >= 3, s
        assert rgb(s["curve"]) == rgb(s["text"]) and contrast(rgb(s["curve"]), canvas) >= 4.5, s
        assert rgb(s["plotPaper"]) == [255, 255, 255]
        assert contrast(rgb(s["plotTitle"]), (255, 255, 255)) >= 4.5, s
        assert engine.console_errors() == []
    finally:
        engine.close()
