"""What a test does to the explorer page (docs/interface.md), written once for every engine:
read a heatmap's data[0].z, click a labelled cell and type into it key by key, wait for the
page's own signals (data-ready, data-renders). No sleeps; no string ever evaluated in the page.
"""
import itertools
import json
import os
from urllib.parse import quote

import numpy as np

from .base import EngineError

BOOT_TIMEOUT_S = 120.0
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "layout_check.js"), encoding="utf-8") as f:
    # An expression (an arrow function called at once): as a function that returns it.
    LAYOUT_CHECK = "() => " + f.read().strip().rstrip(";")
with open(os.path.join(HERE, "chart_values.js"), encoding="utf-8") as f:
    # A function of the chart's element id (its leading comment left out).
    CHART_VALUES = "\n".join(line for line in f.read().splitlines() if not line.startswith("//"))

_resets = itertools.count(1)


def cell(label):
    """The CSS selector of the cell labelled `label` (e.g. "cls[0,1]")."""
    return '[aria-label="%s"]' % label


def state_fragment(state):
    """`#state=` + what JavaScript's encodeURIComponent(JSON.stringify(state)) would give."""
    return "#state=" + quote(json.dumps(state, separators=(",", ":")), safe="-_.!~*'()")


def heatmap_z(engine, element_id):
    """The matrix a heatmap shows, as a NumPy array (None if it has none)."""
    z = engine.evaluate("""(id) => { const el = document.getElementById(id);
        return el && el.data && el.data.length ? Array.from(el.data[0].z, (r) => Array.from(r)) : null; }""",
                        element_id)
    return None if z is None else np.array(z, dtype=float)


def renders(engine):
    return int(engine.evaluate("() => Number(document.documentElement.dataset.renders || 0)"))


def wait_render_after(engine, count, timeout=30.0):
    """Wait until the page has counted a render cycle after `count`; on a timeout, the error
    says what the page showed (its alert, the focused cell and its text, whether Python stopped)."""
    try:
        engine.wait_for("(n) => Number(document.documentElement.dataset.renders || 0) > n", count,
                        timeout=timeout)
    except EngineError as err:
        seen = engine.evaluate("""() => { const el = document.activeElement;
            return [el && el.getAttribute('aria-label'), el && el.value,
                    document.documentElement.dataset.pythonStopped || '',
                    document.documentElement.dataset.renders]; }""")
        raise EngineError("%s; focused %r holding %r; python-stopped %r; renders %s; alert: %s"
                          % (err, seen[0], seen[1], seen[2], seen[3], alerts(engine) or "(none)"))


def alerts(engine):
    return engine.evaluate("""() => Array.from(document.querySelectorAll('#alert, [role=alert]'))
        .map((e) => e.textContent.trim()).filter(Boolean).join(' | ')""")


def wait_ready(engine, timeout=BOOT_TIMEOUT_S):
    """Wait until data-ready is "true"; EngineError with the page's alert if it failed or hung."""
    try:
        engine.wait_for("""() => document.documentElement.dataset.ready === 'true'
                                 || document.documentElement.dataset.bootFailed === 'true'""",
                        timeout=timeout)
    except EngineError:
        status = engine.evaluate("() => (document.getElementById('boot-status') || {}).textContent || ''")
        raise EngineError("%s: the page was not ready in %.0f s; status: %r; alert: %s"
                          % (engine.name, timeout, status, alerts(engine) or "(none)"))
    if engine.evaluate("() => document.documentElement.dataset.ready") != "true":
        raise EngineError("%s: the page could not start; its alert says: %s"
                          % (engine.name, alerts(engine) or "(nothing)"))


def active_label(engine):
    return engine.evaluate("() => document.activeElement && document.activeElement.getAttribute('aria-label')")


SHOWN_IN = {"cls": "heatmap-cls", "W_head": "heatmap-w"}  # a cell's grid -> its heatmap


def edit(engine, label, text, then=None, timeout=30.0):
    """CLICK the cell labelled `label`, type `text` key by key, and wait until the page has
    redrawn with it; then press `then` ("Tab", "Enter") if given. The cell selects its text on
    focus, so the typed text replaces it. Typing "4.5" is three edits ("4", "4.", "4.5"), so
    for a cls or W_head cell the wait is for its heatmap to show the number typed."""
    before = renders(engine)
    engine.click(cell(label))
    engine.type_keys(text)
    wait_render_after(engine, before, timeout)
    grid, _, index = label.partition("[")
    try:
        number = float(text.replace("\u2212", "-"))
    except ValueError:
        number = None
    if grid in SHOWN_IN and number is not None:
        row, col = (int(i) for i in index.rstrip("]").split(","))
        try:
            engine.wait_for("(id, r, c, v) => document.getElementById(id).data[0].z[r][c] === v",
                            SHOWN_IN[grid], row, col, number, timeout=timeout)
        except EngineError:
            raise EngineError("%s: typed %r into %s after a click: the cell holds %r, the "
                              "heatmap shows %r" % (
                                  engine.name, text, label,
                                  engine.evaluate("(s) => document.querySelector(s).value", cell(label)),
                                  heatmap_z(engine, SHOWN_IN[grid])[row, col]))
    if then:
        engine.press(then)


def load_state(engine, state):
    """Show `state` by following a `#state=` link in the open page (a hashchange), after
    blurring the focused element and scrolling to the top. What a link does not hold stays as
    it was (the digit pad's drawing, the fine-tune panel's run, the viewport). Each link carries a new counter (an unknown key, which the page ignores) so that it always
    differs from the URL the page wrote last and the hashchange always happens."""
    state = dict(state, engine_reset=next(_resets))
    before = renders(engine)
    engine.evaluate("""(f) => { if (document.activeElement) document.activeElement.blur();
        window.scrollTo(0, 0); location.hash = f; }""", state_fragment(state)[1:])
    # A new session redraws every panel: after the 60-sample fine-tuning preset, WebKitGTK's
    # software rendering took 5-7 s for it on a loaded 2-CPU machine.
    try:
        wait_render_after(engine, before, timeout=90)
        # then settled, as a person sees it before they click: the link written, and no redraw
        # for two frames and 150 ms (the grids draw their cells again in a frame of their own)
        engine.wait_for(SETTLED, timeout=30)
    except EngineError as e:
        raise EngineError("%s\nthe page then: %s" % (e, json.dumps(snapshot(engine))))


SETTLED = """() => new Promise((done) => {
    const root = document.documentElement, n = root.dataset.renders;
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() =>
        done(root.dataset.renders === n && root.dataset.linkPending !== 'true'), 150)));
})"""


# Test-only instruments (installed by `watch`), read by `snapshot` when a wait fails: the
# Plotly calls whose promise has not settled, and the requests posted to Python's worker.
WATCH = """() => {
  if (window.__vitWatch) return;
  const w = window.__vitWatch = { pending: new Map(), posted: [], hashchanges: [] };
  let k = 0;
  for (const name of ['react', 'relayout', 'purge']) {
    const f = window.Plotly && window.Plotly[name];
    if (!f) continue;
    window.Plotly[name] = function (el, ...rest) {
      const id = ++k;
      w.pending.set(id, name + ' ' + ((el && el.id) || el) + ' at ' + Math.round(performance.now()));
      const p = f.call(this, el, ...rest);
      if (p && p.then) p.then(() => w.pending.delete(id), () => w.pending.delete(id));
      else w.pending.delete(id);
      return p;
    };
  }
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    try { w.posted.push([m.kind, m.request && m.request.op, m.id, Math.round(performance.now())].join(' ')); } catch (e) { /* not ours */ }
    if (w.posted.length > 40) w.posted.shift();
    return post.call(this, m, ...rest);
  };
  window.addEventListener('hashchange', () => w.hashchanges.push(Math.round(performance.now())));
  w.pressed = [];  // where the last pointer presses landed
  document.addEventListener('pointerdown', (e) => {
    const t = e.target;
    w.pressed.push([t.id || t.className || t.tagName, Math.round(e.clientX), Math.round(e.clientY),
                    Math.round(scrollY), Math.round(performance.now())].join(' '));
    if (w.pressed.length > 6) w.pressed.shift();
  }, true);
}"""

SNAPSHOT = """() => {
  const w = window.__vitWatch || { pending: new Map(), posted: [], hashchanges: [] };
  return { now: Math.round(performance.now()), hash: location.hash.slice(0, 60),
           data: Object.assign({}, document.documentElement.dataset),
           finetune: Object.assign({}, (document.getElementById('finetune') || {}).dataset),
           plotly_pending: [...w.pending.values()], posted: w.posted.slice(-12),
           hashchanges: w.hashchanges.slice(-4), pressed: w.pressed || [],
           digit: Object.assign({}, (document.getElementById('digit') || {}).dataset),
           alerts: Array.from(document.querySelectorAll('#alert, [role=alert]'), (e) => e.textContent.trim()).filter(Boolean) };
}"""


def watch(engine):
    """Install the test-only instruments that `snapshot` reads (once per page)."""
    engine.evaluate(WATCH)


def snapshot(engine):
    """What the page is doing, for a failed wait's message: never raises."""
    try:
        return engine.evaluate(SNAPSHOT)
    except Exception as e:  # the page may be gone: say so rather than hide the first error
        return {"snapshot failed": str(e)[:200]}


def curve_drawn(engine, element_id="loss-curve"):
    """The first curve of a line chart as drawn: an array of [step, value] read back from its
    SVG path through the tick labels (tests/browser/chart_values.js), and the value one pixel
    stands for. `engine` is an engine session or a Playwright page."""
    shown = engine.evaluate(CHART_VALUES, element_id)
    return np.array(shown["points"]), shown["valuePerPixel"]


def layout_problems(engine):
    """tests/browser/layout_check.js: what is cut off or overlapping, as sentences."""
    return engine.evaluate(LAYOUT_CHECK)


# ---- colours, as WCAG measures them ---------------------------------------------------------

def luminance(rgb):
    """The relative luminance of an [r, g, b] colour (0-255 each)."""
    def channel(c):
        c = c / 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):
    """WCAG's contrast ratio of two colours (1 to 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb(css):
    """[r, g, b] of a CSS colour as getComputedStyle gives it ("rgb(...)" or "rgba(...)"), or of
    "#rrggbb"."""
    if css.startswith("#"):
        return [int(css[k:k + 2], 16) for k in (1, 3, 5)]
    return [int(float(x)) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
