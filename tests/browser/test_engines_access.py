"""Accessibility (issue 46) in three engines, on the page test_engines.py boots (PyScript host:
the markup is the same on both), what is seen and heard: the numbers painted on heatmap cells
measured from the canvas's pixels, and what is announced per action. Forced colours in
Firefox, a browser of its own (Chromium: test_page_forced_colours.py; WebKitGTK has no forced
colours mode: docs/accessibility-checks.md). The keyboard's part (a tour of the figures, no Tab
stop hidden) is test_engines_keyboard.py. Expected values: NumPy and WCAG's formulas written
out in the tests (kit.contrast; tests/browser/finetunekit.py)."""
import numpy as np
import pytest

from .engines import EngineError, launch
from .engines.app import BEYOND_CHROMIUM, CLS, PAGE, W, head, settle_layout
from .engines.kit import (cell, contrast, edit, heatmap_z, load_state, luminance, renders,
                          rgb, wait_ready, wait_render_after)
from .test_engines_panels import IDLE, PAD_IN_VIEW
from .test_page_forced_colours import STYLES

pytestmark = [pytest.mark.browser]

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


@PAGE
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


@PAGE
@BEYOND_CHROMIUM
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
    # Pause, if Play has not stopped by itself meanwhile: read and pressed in one task, since a
    # real press that lands just after Play converged (about 2.5-3 s here) would start it again
    engine.evaluate("""() => { if (document.getElementById('finetune').dataset.playing === 'true')
        document.getElementById('ft-play').click(); }""")
    engine.wait_for(IDLE, timeout=60)
    end = engine.evaluate("() => performance.now()")
    # where it stopped is said once the page has drawn nothing for a second (js/page/announce.js)
    engine.wait_for("() => document.getElementById('ft-said').textContent === "
                    "document.getElementById('ft-status').textContent", timeout=10)
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
