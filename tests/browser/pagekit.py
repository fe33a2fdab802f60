"""What a test does to the explorer page, in the words of the page's interface (docs/interface.md):
read a heatmap's data[0].z, type into a labelled cell, wait for the next render cycle.
Waits are on the page's own signals (data-ready, data-renders, aria-invalid), never on sleeps.
"""
import json
from urllib.parse import quote

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

BOOT_TIMEOUT_MS = 120000  # far beyond a cold boot's time (docs/performance.md): a loaded CI machine


def state_fragment(state):
    """`#state=` + what JavaScript's encodeURIComponent(JSON.stringify(state)) would give."""
    return "#state=" + quote(json.dumps(state, separators=(",", ":")), safe="-_.!~*'()")


def heatmap_z(page, element_id):
    """The matrix a heatmap shows, as a NumPy array (rows as Plotly holds them)."""
    z = page.evaluate(
        """id => {
            const el = document.getElementById(id);
            return el && el.data && el.data.length ? el.data[0].z.map(r => Array.from(r)) : null;
        }""", element_id)
    return None if z is None else np.array(z, dtype=float)


# Plotly's responsive figures follow a resized window after a pause (their own timer), so boxes
# measured at once are the old layout's. Figures kept hidden (made ahead, or hidden by a choice)
# keep the size they were drawn at until they are shown again, when they are sized anew
# (js/heatmap/draw.js, clearHeatmap).
FIGURES_FOLLOWED = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter((el) => el._fullLayout && el.offsetParent && getComputedStyle(el).visibility !== 'hidden')
    .every((el) => Math.abs(el._fullLayout.width - parseFloat(getComputedStyle(el).width)) < 1)"""


# The walk-through's current step drawn and its figures brought into view, with no reveal
# pending (js/panels/walkthrough.js: data-revealed, and data-settling while a changed layout settles).
STEP_REVEALED = """() => { const w = document.getElementById('walk').dataset;
    return w.revealed === w.step && w.settling !== 'true'; }"""


def set_viewport(page, size):
    """Resize the window to `size` ({"width", "height"}), as a person drags its edge, and wait
    until every figure shown has been laid out again at its new width."""
    page.set_viewport_size(size)
    page.wait_for_function(FIGURES_FOLLOWED)


def on_bridge(statements):
    """An init script that runs `statements` (JavaScript, with `bridge` in scope) on the bridge
    the host hands the page, before the page takes it (host.js assigns self.vitHost once; this
    wraps its ready())."""
    return """
(() => {
  let host;
  Object.defineProperty(self, "vitHost", { configurable: true, get: () => host, set: (value) => {
    const ready = value.ready;
    value.ready = (bridge) => {
      %s
      return ready.call(value, bridge);
    };
    host = value;
  }});
})();
""" % statements


def renders(page):
    return int(page.evaluate("document.documentElement.dataset.renders || '0'"))


def wait_render_after(page, count, timeout=30000):
    page.wait_for_function(
        "n => Number(document.documentElement.dataset.renders || 0) > n", arg=count, timeout=timeout)


def edit(page, label, text):
    """Type `text` into the cell labelled `label` and wait until the page has redrawn."""
    before = renders(page)
    page.get_by_label(label, exact=True).fill(text)
    wait_render_after(page, before)


def act(page, action):
    """Run `action()` (a click, a select) and wait for the render cycle it causes."""
    before = renders(page)
    action()
    wait_render_after(page, before)


def download(page, action):
    """Run `action()` (a click) and return the download it starts: (its file name, its bytes)."""
    with page.expect_download() as info:
        action()
    saved = info.value
    with open(saved.path(), "rb") as f:
        return saved.suggested_filename, f.read()


def alert_text(page):
    box = page.locator("#alert")
    return box.inner_text() if box.is_visible() else ""


def page_fragment(page):
    return page.evaluate("location.hash")


def logits_table(page):
    """The numeric logits table as text rows (without the row headers)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('#logits-table tbody tr'))
                 .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent))""")


def _alerts(page):
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('#alert, [role=alert]'))"
        ".map(e => e.textContent.trim()).filter(Boolean).join(' | ')")


def wait_ready(page, timeout=BOOT_TIMEOUT_MS):
    """Wait until the page says it is interactive; fail with its alert if it could not start."""
    try:
        page.wait_for_function(
            """() => document.documentElement.dataset.ready === 'true'
                     || document.documentElement.dataset.bootFailed === 'true'""",
            timeout=timeout)
    except PlaywrightTimeoutError:
        status = page.evaluate("(document.getElementById('boot-status') || {}).textContent")
        pytest.fail("the page did not become ready in %d s; status: %r; alert: %s"
                    % (timeout // 1000, status, _alerts(page) or "(none)"), pytrace=False)
    if page.evaluate("document.documentElement.dataset.ready") != "true":
        pytest.fail("the page could not start; its alert says: %s" % (_alerts(page) or "(nothing)"),
                    pytrace=False)
    return page


def open_explorer(page, base_url, fragment="", query=""):
    """Navigate to the explorer and wait for its readiness signal (or fail on a boot alert).
    A host's reused page (conftest.py), already reset to the worked example, is not booted
    again: it loads `fragment` as a pasted link is loaded (load_link)."""
    index = base_url.rstrip("/") + "/index.html"
    if (SHARED.get(id(page)) == base_url and not query
            and page.url.split("#")[0] == index and page.evaluate("location.search") == ""):
        if fragment and fragment != DEFAULT_LINK:
            load_link(page, fragment)
        return page
    page.goto(index + query + fragment)
    return wait_ready(page)


# ---- one booted page per host, reused across tests (tests/browser/conftest.py) --------------
#
# A cold boot costs seconds; a test that only varies what the page shows reuses the host's page:
# reset_page() undoes what a person (or a test) can leave behind, loads the worked example
# through the page's own hashchange handler (as a pasted link is loaded), and then checks that
# the page reads exactly as it did when it was freshly booted (FINGERPRINT). open_explorer() on
# such a page loads the test's link the same way instead of booting again.

from pycore.explorer import default_state  # noqa: E402  (the fragment Python writes for it)
from pycore.explorer.state.link import encode_fragment  # noqa: E402

DEFAULT_LINK = "#" + encode_fragment(default_state())
DEFAULT_VIEWPORT = {"width": 1280, "height": 720}  # Playwright's, as a fresh page has it

SHARED = {}  # id(page) -> base URL of the host whose reused page it is


class ResetFailed(AssertionError):
    """The page could not be brought back to how a fresh boot shows it."""


# What a fresh page shows and keeps, in the page's own words (docs/interface.md): everything a
# test can change and the next test could trip on. Counters (data-renders, warm-up) are not in it.
FINGERPRINT = """() => {
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;
  const where = (e) => e.id || ((e.parentElement && e.parentElement.id) || '?') + ' > ' + e.className;
  const z = (id) => {  // the matrix a heatmap shows, in brief: its shape, sum and sum of squares
    const el = $(id);
    if (!(el && el.data && el.data.length && el.data[0].z)) return null;
    let sum = 0, squares = 0, cols = 0;
    for (const row of el.data[0].z) { cols = row.length; for (const v of row) { sum += v; squares += v * v; } }
    return [el.data[0].z.length, cols, sum.toFixed(6), squares.toFixed(6)].join(' ');
  };
  const ft = $('finetune').dataset;
  return {
    ready: root.dataset.ready, bootFailed: root.dataset.bootFailed || null,
    url: location.pathname + location.search + location.hash,
    htmlClass: root.className, mode: root.dataset.mode, linkPending: root.dataset.linkPending || null,
    linkedLogit: root.dataset.linkedLogit || null,
    alert: [$('alert').hidden, $('alert').textContent], toast: $('toast').textContent,
    linkNote: $('link-note').hidden,
    dialogs: Array.from(document.querySelectorAll('dialog[open]'), where),
    openDetails: Array.from(document.querySelectorAll('details[open]'), where),
    selects: Array.from(document.querySelectorAll('select'), (s) => [s.id, s.value]),
    inputs: Array.from(document.querySelectorAll('input:not(.cell)'),
                       (i) => [i.id || i.getAttribute('aria-label'), i.type === 'checkbox' ? i.checked : i.value,
                               i.getAttribute('aria-invalid') === 'true']),  // "false" = absent
    pressed: Array.from(document.querySelectorAll('[aria-pressed]'), (b) => [b.id, b.getAttribute('aria-pressed')]),
    invalid: document.querySelectorAll('[aria-invalid="true"]').length,
    pending: document.querySelectorAll('.cell.pending').length,
    walk: $('walk').dataset.active === 'true' ? ['on', $('walk').dataset.step] : 'off',
    finetune: [ft.busy || null, ft.playing || null, ft.runSteps || '0', $('ft-error').hidden],
    topK: $('top-k-k').dataset.k || $('top-k-k').value,
    contributions: $('contributions').hidden,
    digit: [$('digit').dataset.active || null,
            Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'),
                       (c) => Number(c.dataset.value) || 0).reduce((a, b) => a + b, 0)],
    logits: z('heatmap-logits'), W_head: z('heatmap-w'), cls: z('heatmap-cls'),
    zoomed: Array.from(document.querySelectorAll('.js-plotly-plot'), (e) => e.layout || {})
        .some((l) => (l.xaxis || {}).autorange === false || (l.yaxis || {}).autorange === false),
    scrolled: [scrollX, scrollY].concat(Array.from(document.querySelectorAll('.table-scroll'),
                                                   (e) => e.scrollTop + e.scrollLeft)).some(Boolean),
    gridScrolled: Array.from(document.querySelectorAll('.grid-body'), (e) => e.scrollTop + e.scrollLeft).some(Boolean),
    focus: document.activeElement === document.body || document.activeElement === null,
    viewport: [innerWidth, innerHeight],
    media: ['(prefers-color-scheme: dark)', 'print', '(prefers-reduced-motion: reduce)']
        .map((q) => matchMedia(q).matches),
  };
}"""


def fingerprint(page):
    return page.evaluate(FINGERPRINT)


def fingerprint_diff(shown, fresh):
    return ["%s: %r, freshly booted %r" % (k, shown.get(k), fresh.get(k))
            for k in sorted(set(shown) | set(fresh)) if shown.get(k) != fresh.get(k)]


def load_link(page, fragment):
    """Open `fragment` in a ready page as a person pasting the link into the address bar does:
    the page's hashchange handler loads it (one render cycle). The hash is emptied first without
    an event, so the change is seen even when the URL holds that link already."""
    before = renders(page)
    page.evaluate("""f => { history.replaceState(null, '', location.pathname + location.search);
                            location.hash = f; }""", fragment)
    wait_render_after(page, before)


# Undoes, in the page, what a person's own settings are, which the page's reset (a link pasted
# into the address bar goes through the `reset` request and each panel's reset) leaves alone: a
# dialog, the toast, large text, opened details, the focus, the scroll.
RESET_DOM = """fresh => {
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;
  document.querySelectorAll('dialog[open]').forEach((d) => d.close());
  if (root.classList.contains('large')) $('text-size').click();
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  const where = (e) => e.id || ((e.parentElement && e.parentElement.id) || '?') + ' > ' + e.className;
  document.querySelectorAll('details').forEach((d) => { d.open = fresh.openDetails.includes(where(d)); });
  $('toast').textContent = '';
}"""

RESET_AFTER = """([link, fresh]) => {
  const $ = (id) => document.getElementById(id);
  // the preset as a fresh page has it (not "link"); the equations' and the walk-through's
  // choices as the state now has them (they are redrawn only when in view, or in use)
  for (const [id, value] of fresh.selects) {
    if (['preset', 'step-sample', 'step-class', 'walk-sample', 'walk-class'].includes(id)) $(id).value = value;
  }
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  for (const [id, value] of fresh.inputs) if (id === 'seed') $(id).value = value;
  if (location.hash !== link) history.replaceState(null, '', location.pathname + location.search + link);
  document.querySelectorAll('.table-scroll').forEach((e) => { e.scrollTop = 0; e.scrollLeft = 0; });
  window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
}"""

_resets = [0]


def reset_page(page, fresh):
    """Bring a reused page back to the worked example as a fresh boot shows it, and check that
    it reads as `fresh` (its FINGERPRINT when it was booted); raises ResetFailed if not."""
    shown = fingerprint(page)
    if shown["gridScrolled"]:
        # A big grid scrolled far: taking it back to the worked example keeps this page busy for
        # a minute and more (a page issue, reported); a newly booted page is quicker.
        raise ResetFailed("a grid is scrolled away from its first cell")
    if shown["viewport"] != fresh["viewport"]:
        set_viewport(page, DEFAULT_VIEWPORT)
    if shown["media"] != fresh["media"]:
        page.emulate_media(media="null", color_scheme="null", reduced_motion="null")
    page.mouse.move(0, 0)
    page.evaluate(RESET_DOM, {"openDetails": fresh["openDetails"]})
    load_link(page, worked_link())  # the page's own reset: Python's session and every panel's
    page.wait_for_function("""() => { const s = document.getElementById('finetune').dataset;
        return s.busy !== 'true' && s.playing !== 'true'; }""", timeout=60000)
    page.evaluate(RESET_AFTER, [DEFAULT_LINK, fresh])
    problems = fingerprint_diff(fingerprint(page), fresh)
    if problems:
        raise ResetFailed("the reused page is not as freshly booted after its reset:\n  "
                          + "\n  ".join(problems))
    return page


def worked_link():
    """A link to the worked example that Python never writes itself (it carries a key Python
    ignores, a new one each time): the page's hashchange handler always loads it."""
    from pycore.explorer import state_to_json
    _resets[0] += 1
    return state_fragment(dict(state_to_json(default_state()), reset=_resets[0]))


def model_pixels(page):
    """The 8 x 8 image the tiny ViT reads (a pen drawing prepared by web/js/digits/ink.js, anything
    else the pad's pixels), as the page shows it beside the pad: (8, 8) floats. `page` is a
    Playwright page or an engine of tests/browser/engines (both evaluate JavaScript)."""
    return image_of(page.evaluate("() => document.getElementById('digit-model-image').dataset.pixels"))


def image_of(text):
    """An 8 x 8 image's data-pixels text (64 numbers, comma-separated) as an (8, 8) array."""
    values = [float(v) for v in text.split(",")] if text else []
    assert len(values) == 64, text
    return np.array(values).reshape(8, 8)
