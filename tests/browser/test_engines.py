"""The page in three engines (Chromium, Firefox, WebKit) on both hosts (PyScript, fallback):
the same scenarios, written once against tests/browser/engines/, input by real key and pointer
events. What the page SHOWS is checked against NumPy written out here.

One page is booted per engine and host and the scenarios run on it in order, each starting
from a `#state=` link to the worked example (kit.load_state); only the scenarios about booting
(in a cross-origin iframe with a foreign CSP violation during the boot, under stricter policies)
boot a page of their own, last.
Each site is served with its own policy plus a report-uri, so that a CSP violation anywhere
(the page, its workers, in any engine) reaches this server.
"""
import base64
import functools
import json
import os
import re
import threading
import time

import numpy as np
import pytest

from buildtools.serve import SiteHandler, SiteServer, serve_in_thread, site_policy
from pycore import classification_head, load_tiny_vit
from pycore.explorer.comparisons import of_kind
from reference import WORKED_CLS, WORKED_W_HEAD, reference_head
from reference_vit import reference_encode

from .engines import ENGINES, EngineError, axe, launch
from .figure_files import png_looks, png_size, svg_figure
from .pdf_pages import BACK_ON_SCREEN, PIPELINE_TITLES, PRINT_LAYOUT, PdfReader, handout_problems
from .pagekit import model_pixels
from .engines.kit import (alerts, active_label, cell, contrast, curve_drawn, edit, heatmap_z,
                          layout_problems, load_state, luminance, renders, rgb, SETTLED,
                          state_fragment, wait_ready, wait_render_after, watch)

pytestmark = [pytest.mark.browser]

HOSTS = ("pyscript", "fallback")
CLS, W = np.array(WORKED_CLS, float), np.array(WORKED_W_HEAD, float)
REPORT_PATH = "/__csp-report"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def head(cls, w):
    """LayerNorm without gamma/beta (population variance, eps 1e-6 inside the root), times W."""
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    h_hat = (cls - mu) / np.sqrt(var + 1e-6)
    return h_hat, h_hat @ w


# ---- the sites, with a report-uri -----------------------------------------------------------

class ReportingSites:
    """Each host's built site (built by the `sites` fixture) served again with its own policy
    plus `report-uri`, collecting the browsers' violation reports."""

    def __init__(self, sites):
        self.sites, self.urls, self.servers, self.reports = sites, {}, [], []

    def url(self, host):
        if host not in self.urls:
            self.sites.url(host)  # builds it (or fails saying why)
            folder = os.path.join(ROOT, "build", "test-" + host)
            reports = self.reports

            class Handler(SiteHandler):
                quiet = True
                policy = site_policy(folder) + "; report-uri " + REPORT_PATH

                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    if self.path.startswith(REPORT_PATH):
                        try:
                            reports.append(json.loads(body.decode("utf-8")))
                        except ValueError:
                            reports.append({"unreadable": body[:300].decode("latin-1")})
                    self.send_response(204)
                    self.end_headers()

            server = SiteServer(("127.0.0.1", 0), functools.partial(Handler, directory=folder))
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers.append(server)
            self.urls[host] = "http://127.0.0.1:%d/" % server.server_address[1]
        return self.urls[host]

    def close(self):
        for server in self.servers:
            server.shutdown()
            server.server_close()


def violation(report):
    r = report.get("csp-report", report)
    return "%s blocked %s (%s:%s)" % (r.get("effective-directive") or r.get("violated-directive"),
                                     r.get("blocked-uri"), r.get("source-file"), r.get("line-number"))


@pytest.fixture(scope="session")
def reporting_sites(sites):
    found = ReportingSites(sites)
    yield found
    found.close()


# ---- one booted page per engine and host ----------------------------------------------------

@pytest.fixture(scope="module", params=ENGINES)
def engine_name(request):
    return request.param


@pytest.fixture(scope="module", params=HOSTS)
def host(request):
    return request.param


class App:
    """The page booted once in one engine on one host; scenarios check what happened since
    they started (console errors, CSP reports)."""

    def __init__(self, engine, base, reports, host="pyscript"):
        self.engine, self.base, self.reports, self.host = engine, base, reports, host
        self.boot_error = None
        self.reports_at_boot = self.reports_seen = len(reports)
        self.errors_seen = 0
        try:
            engine.goto(base + "index.html")
            wait_ready(engine)
            watch(engine)  # what a failed wait reports (kit.snapshot)
        except EngineError as e:
            self.boot_error = str(e)

    def start(self, viewport=(1280, 720)):
        """Before a scenario: the page must have booted; back to the worked example."""
        if self.boot_error:
            pytest.fail("the page did not boot in %s: %s" % (self.engine.name, self.boot_error),
                        pytrace=False)
        self.engine.set_viewport(*viewport)
        self.errors_seen = len(self.engine.console_errors())
        self.reports_seen = len(self.reports)
        load_state(self.engine, {"cls": CLS.tolist(), "W_head": W.tolist()})
        return self.engine

    def problems(self):
        """Console errors and CSP violations since the scenario started."""
        found = ["console: %s" % e for e in self.engine.console_errors()[self.errors_seen:]]
        found += ["CSP violation: %s" % violation(r) for r in self.reports[self.reports_seen:]]
        return found

    def assert_clean(self):
        assert self.problems() == []

    def assert_axe_clean(self, state):
        """On the PyScript host (the page is the same on the fallback host): every WCAG 2.x A and AA
        rule of axe-core on the page as it is now, in `state`; any violation fails, whatever its
        impact; "incomplete" results are printed (docs/accessibility-checks.md)."""
        if self.host == "pyscript":
            found = axe.check(self.engine, axe.source(), state)
            assert axe.violations([found]) == {}, axe.report(found)


@pytest.fixture(scope="module")
def app(engines, engine_name, host, reporting_sites):
    engine = engines.get(engine_name)
    return App(engine, reporting_sites.url(host), reporting_sites.reports, host)


# ---- scenarios on the booted page -----------------------------------------------------------

def test_boots_to_ready_without_console_errors_or_csp_violations(app, host):
    engine = app.start()
    assert engine.evaluate("() => document.documentElement.dataset.ready") == "true"
    if host == "pyscript":  # NumPy's libraries compiled while Python started (wheel-libraries.mjs)
        said = engine.evaluate("() => document.documentElement.dataset.earlyLibraries")
        used, compiled = map(int, said.split(" of "))
        assert 1 <= used <= compiled, said
    assert alerts(engine) == ""
    app.assert_axe_clean("the worked example, as booted")
    app.errors_seen, app.reports_seen = 0, app.reports_at_boot  # all since the navigation
    app.assert_clean()


def test_a_state_link_shows_exactly_numpys_logits(app):
    engine = app.start()
    rng = np.random.RandomState(7)
    cls, w = np.round(rng.standard_normal((3, 5)), 3), np.round(rng.standard_normal((5, 4)), 3)
    load_state(engine, {"cls": cls.tolist(), "W_head": w.tolist()})
    h_hat, logits = head(cls, w)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-normalized"), h_hat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), logits, rtol=0, atol=1e-12)
    app.assert_clean()


def test_a_link_nested_1900_deep_is_refused_and_the_page_keeps_answering(app):
    """An 11 KB link of 1,900 nested arrays once overflowed the WebAssembly stack in Python's JSON
    reader: the runtime died, and no edit was answered again. Now it is refused in words."""
    engine = app.start()
    before = renders(engine)
    engine.evaluate("(f) => { location.hash = f; }", "state=" + "%5B" * 1900 + "%5D" * 1900)
    wait_render_after(engine, before)
    said = alerts(engine)
    assert "nests arrays or objects 1,900 deep; the page reads JSON at most 32 deep" in said, said
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, W)[1], atol=1e-12)
    edit(engine, "cls[1,2]", "0.5")  # and edits are answered (the next scenario loads a link)
    cls = CLS.copy()
    cls[1, 2] = 0.5
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    app.assert_clean()


def test_click_a_cls_cell_and_type_key_by_key(app):
    engine = app.start()
    edit(engine, "cls[0,1]", "4.5", then="Tab")
    cls = CLS.copy()
    cls[0, 1] = 4.5
    h_hat, logits = head(cls, W)
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-cls"), cls)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-normalized"), h_hat, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), logits, atol=1e-12)
    app.assert_clean()


def test_click_a_w_head_cell_and_type_then_the_bottom_row_with_enter(app):
    engine = app.start()
    w = W.copy()
    edit(engine, "W_head[2,1]", "-0.25", then="Tab")
    w[2, 1] = -0.25
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    edit(engine, "W_head[3,2]", "1.5", then="Enter")  # Enter on the last row: it stays there
    w[3, 2] = 1.5
    assert active_label(engine) == "W_head[3,2]"
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, w)[1], atol=1e-12)
    app.assert_clean()


def test_paste_a_block_at_the_focused_cell(app):
    engine = app.start()
    engine.click(cell("cls[0,1]"))
    before = renders(engine)
    engine.paste("9\t8\n7\t6")
    wait_render_after(engine, before)
    cls = CLS.copy()
    cls[0:2, 1:3] = [[9, 8], [7, 6]]
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-cls"), cls)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    assert active_label(engine) == "cls[0,1]"
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("cls[0,1]")) == "9"
    app.assert_clean()


def test_escape_takes_a_typed_entry_back(app):
    engine = app.start()
    engine.click(cell("W_head[1,2]"))
    engine.type_keys("25")  # valid all the way: previewed while typing
    engine.wait_for("() => document.getElementById('heatmap-w').data[0].z[1][2] === 25")
    engine.press("Escape")
    engine.wait_for("() => document.getElementById('heatmap-w').data[0].z[1][2] === -0.5")
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("W_head[1,2]")) == "-0.5"
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, W)[1], atol=1e-12)
    app.assert_clean()


def test_scrub_a_number_with_keys_then_a_finger_on_its_handle(app):
    engine = app.start()
    z = "() => document.getElementById('heatmap-cls').data[0].z[0][1]"
    engine.click(cell("cls[0,1]"))
    for _ in range(3):
        engine.press("Alt+ArrowUp")  # 0.1 a step: -1 -> -0.7
    engine.wait_for(z + " === -0.7")
    cls = CLS.copy()
    cls[0, 1] = -0.7
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("cls[0,1]")) == "-0.7"
    engine.press("Escape")  # back to the number before the steps
    engine.wait_for(z + " === -1")
    # a finger drags the focused cell's handle to the right: the number grows, 0.01 a pixel
    engine.drag("#grid-input .scrub-handle", [(0.5, 0.5), (1.5, 0.5), (2.5, 0.5), (3.5, 0.5)], kind="touch")
    engine.wait_for("() => document.documentElement.dataset.linkPending === 'false' && " + z[6:] + " > -0.9")
    value = heatmap_z(engine, "heatmap-cls")[0, 1]
    assert -0.9 < value < -0.2, value
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("cls[0,1]")) == repr(float(value)).rstrip("0").rstrip(".")
    cls[0, 1] = value
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    # the link follows once the scrub pauses
    assert json.loads(engine.evaluate(
        "() => decodeURIComponent(new URLSearchParams(location.hash.slice(1)).get('state'))"))["cls"][0][1] == value
    app.assert_clean()


def test_tab_leaves_the_grid_as_one_stop(app):
    engine = app.start()
    engine.click(cell("cls[0,2]"))
    engine.press("Tab")
    assert engine.evaluate(
        "() => !document.getElementById('grid-input').contains(document.activeElement)")
    engine.press("Shift+Tab")  # back to the cell it left
    assert active_label(engine) == "cls[0,2]"
    app.assert_clean()


def walk_math(engine):
    text = engine.evaluate("() => document.querySelector('#walk-math .katex-html').textContent")
    return "".join(ch for ch in text.replace("\u2212", "-") if not ch.isspace() and ch != "\u200b")


def test_the_walk_through_steps(app):
    engine = app.start()
    mu = CLS.mean(axis=1)
    var = ((CLS - mu[:, None]) ** 2).mean(axis=1)
    h_hat, logits = head(CLS, W)
    before = renders(engine)
    engine.click("#walk-start")
    wait_render_after(engine, before)
    engine.wait_for("() => document.activeElement.id === 'walk-next'")
    title = "() => document.getElementById('walk-title').textContent"
    assert engine.evaluate(title) == "Step 1 of 7: the CLS token of sample 0"
    shown = []
    for _ in range(3):  # the mean, the variance, normalize: by the arrow key
        before = renders(engine)
        engine.press("ArrowRight")
        wait_render_after(engine, before)
        shown.append(walk_math(engine))
    assert shown[0].endswith("%.4f" % mu[0]) and shown[1].endswith("%.4f" % var[0])
    assert all(("%.4f" % v) in shown[2] for v in h_hat[0])
    before = renders(engine)
    engine.click("#walk-next")  # and by the button: one dot product, the predicted class
    wait_render_after(engine, before)
    c = int(np.argmax(logits[0]))
    assert engine.evaluate(title) == "Step 5 of 7: one dot product: sample 0, class %d" % c
    assert walk_math(engine).endswith("%.4f" % (h_hat[0] @ W[:, c]))
    app.assert_axe_clean("the walk-through at step 5 of 7")
    app.assert_clean()


def choose(engine, menu, value):
    """Choose `value` in the <select> `menu` (as its change event says) and wait for the redraw."""
    before = renders(engine)
    engine.evaluate("""(id, value) => { const s = document.getElementById(id); s.value = value;
        s.dispatchEvent(new Event('change', { bubbles: true })); }""", menu, value)
    wait_render_after(engine, before)


TITLES = {c.key: c.title for c in of_kind("pitfall")}


# Whether each figure is out of sight and takes no room: hidden with nothing chosen (explorer.css),
# its box of no height.
UNSEEN = """(ids) => ids.map((id) => { const el = document.getElementById(id);
    return getComputedStyle(el).visibility === 'hidden' && (el.closest('.gradient-figure') ||
        el.closest('.compare') || el.closest('.plot-box')).getBoundingClientRect().height === 0; })"""
# How far each figure's drawing is from its box's width, in px (-1: not drawn).
FITS = """(ids) => ids.map((id) => { const el = document.getElementById(id);
    const svg = el.querySelector('.main-svg');
    return svg ? Math.abs(svg.getBoundingClientRect().width - el.clientWidth) : -1; })"""
# What a comparison figure shows beside its z: its title, its colour key, its cells painted (and
# the first cell's number printed in it), its numbers table (opened and closed again here), as
# text, and the page's hover label with the pointer over its last cell.
SHOWN = """async (id) => { const el = document.getElementById(id), box = el.parentElement;
    const key = el.nextElementSibling, numbers = box.querySelector('details.numbers-toggle');
    numbers.open = true;  // filled as it opens (its toggle event), closed again after
    await new Promise((r) => setTimeout(r, 100));
    const table = Array.from(numbers.querySelectorAll('tbody tr'),
                             (tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent));
    numbers.open = false;
    const view = box.querySelector('canvas.heatmap-bitmap');
    const ink = view.getContext('2d').getImageData(0, 0, view.width, view.height).data.some((v) => v > 0);
    // the first cell's middle: one colour, or its number printed over it
    const rows = el.data[0].z.length, cols = el.data[0].z[0].length;
    const cw = view.width / cols, ch = view.height / rows;
    const middle = view.getContext('2d').getImageData(Math.round(cw * 0.2), Math.round(ch * 0.2),
                                                       Math.round(cw * 0.6), Math.round(ch * 0.6)).data;
    const colours = new Set();
    for (let i = 0; i < middle.length; i += 4) colours.add(middle.slice(i, i + 4).join());
    // a pointer over the last cell: the page's hover label
    const area = el.querySelector('.nsewdrag').getBoundingClientRect();
    el.dispatchEvent(new MouseEvent('mousemove', { bubbles: true,
        clientX: area.left + area.width * (cols - 0.5) / cols, clientY: area.top + area.height * (rows - 0.5) / rows }));
    const label = box.querySelector('.hover-value');
    const hover = label && !label.hidden ? label.textContent : null;
    el.dispatchEvent(new MouseEvent('mouseleave', { bubbles: true }));
    return { title: el.querySelector('.gtitle').textContent, titleSize: el.layout.title.font.size,
             rowsTitle: el.querySelector('.g-ytitle').textContent,
             key: key.classList.contains('colour-key') && !key.hidden, painted: ink, table,
             numberInCell: colours.size > 2, hover }; }"""


# Where each figure's x ticks end and its x-axis title begins, in px from the figure's top, and
# the plot area Plotly laid out (said when the layout check finds a tick over a title).
AXES = """(ids) => ids.map((id) => { const el = document.getElementById(id), top = el.getBoundingClientRect().top;
    const ticks = [...el.querySelectorAll('.xtick text')].map((t) => t.getBoundingClientRect().bottom - top);
    const title = el.querySelector('.g-xtitle text');
    const size = el._fullLayout._size;
    return { id, ticksEnd: Math.max(...ticks), titleTop: title && title.getBoundingClientRect().top - top,
             plot: [size.t, size.h, size.b], height: el._fullLayout.height }; })"""


# What a click on the toolbar's Large text met: the element at the button's centre, and where the
# button and the page were (said when the text size did not change).
AT_TEXT_SIZE = """() => { const b = document.getElementById('text-size'), r = b.getBoundingClientRect();
    const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return { at: at && (at.id || String(at.className) || at.tagName), top: r.top, bottom: r.bottom,
             scrollY, innerHeight, pressed: b.getAttribute('aria-pressed') }; }"""


def text_size(engine, large):
    """Click the toolbar's Large text and wait for the text size asked for."""
    engine.click("#text-size")
    try:
        engine.wait_for("(large) => document.documentElement.classList.contains('large') === large",
                        large, timeout=10)
    except EngineError as e:
        raise EngineError("%s; the click met %s" % (e, json.dumps(engine.evaluate(AT_TEXT_SIZE))))


def layout_settled(engine, seconds=3):
    """The layout check once it finds nothing, or what it still finds after `seconds`: Plotly may
    lay a figure's margins out again a moment after its promise resolved (seen once in WebKit,
    on a loaded machine: a tick label over the axis title)."""
    deadline = time.monotonic() + seconds
    while True:
        problems = layout_problems(engine)
        if not problems or time.monotonic() > deadline:
            return problems
        time.sleep(0.1)


def numbers_in(text):
    return [float(t) for t in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text.replace("\u2212", "-"))]


def shown_numbers(table):
    return np.array([[float(t.replace("\u2212", "-")) for t in row] for row in table])


def test_figures_made_ahead_show_the_first_choice_and_the_next(app):
    """The figures Python shows only on a choice are made ahead, hidden, once Python's warm-up is
    over (js/app.js: figuresAhead): the first mistake chosen, and the same mistake after none, show its
    numbers, title, key, painted cells and numbers table; one chosen after the text size changed
    while hidden is drawn in the new size; the encoder output, made as Python described it, shows
    the seeded tokens when a mistake needs them."""
    engine = app.start()
    engine.wait_for("() => document.documentElement.dataset.ahead === 'done'", timeout=90)
    ahead = engine.evaluate("async () => (await import('./js/app.js')).figuresAhead().map(([id]) => id)")
    assert "heatmap-pitfall" in ahead and "heatmap-encoder" in ahead, ahead
    made = engine.evaluate("""(ids) => ids.map((id) => { const el = document.getElementById(id);
        return Boolean(el._fullLayout) && !el.data; })""", ahead)
    assert made == [True] * len(ahead)
    assert engine.evaluate(UNSEEN, ahead) == [True] * len(ahead)
    _, logits = head(CLS, W)
    skipped = CLS @ W
    expected = {"heatmap-pitfall-correct": logits, "heatmap-pitfall": skipped,
                "heatmap-pitfall-diff": skipped - logits}
    for turn in ("made ahead", "hidden and chosen again"):
        choose(engine, "pitfall", "no_layernorm")
        for figure, z in expected.items():
            np.testing.assert_allclose(heatmap_z(engine, figure), z, rtol=0, atol=1e-12)
            got = engine.evaluate(SHOWN, figure)
            assert got["key"] and got["painted"] and got["numberInCell"], (turn, figure, got)
            np.testing.assert_allclose(shown_numbers(got["table"]), z, rtol=0, atol=5.01e-5)
            assert got["hover"] and any(abs(v - z[-1, -1]) <= 5e-3 for v in numbers_in(got["hover"])), got["hover"]
        got = engine.evaluate(SHOWN, "heatmap-pitfall")
        assert got["title"] == TITLES["no_layernorm"]
        normal = got["titleSize"]
        assert engine.evaluate(UNSEEN, list(expected)) == [False] * 3
        off = engine.evaluate(FITS, list(expected))
        assert all(0 <= d <= 1 for d in off), (turn, off)
        assert layout_settled(engine) == [], (turn, engine.evaluate(AXES, list(expected)))
        choose(engine, "pitfall", "")
    text_size(engine, large=True)
    try:
        choose(engine, "pitfall", "no_layernorm")
        got = engine.evaluate(SHOWN, "heatmap-pitfall")
        assert got["titleSize"] > normal and got["key"] and got["painted"], got
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-pitfall"), skipped, rtol=0, atol=1e-12)
        choose(engine, "pitfall", "")
    finally:
        text_size(engine, large=False)
    # the encoder output, made ahead as Python described it (the answer's "ahead"), shown by the
    # mistake that needs it: the CLS vectors at position 0 of seeded tokens
    choose(engine, "pitfall", "last_position")
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


def test_a_mistake_chosen_again_after_none_and_a_resize(app):
    """A comparison's figures stay made while no comparison is chosen (js/heatmaps.js:
    clearHeatmap): hidden, they hold no numbers; chosen again after the window changed size,
    they show the mistake's numbers and fit their new width."""
    engine = app.start()
    h_hat, logits = head(CLS, W)
    skipped = CLS @ W  # LayerNorm skipped: the CLS vectors straight into W_head
    figures = ("heatmap-pitfall-correct", "heatmap-pitfall", "heatmap-pitfall-diff")
    choose(engine, "pitfall", "no_layernorm")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-pitfall"), skipped, rtol=0, atol=1e-12)
    choose(engine, "pitfall", "")
    assert [heatmap_z(engine, f) for f in figures] == [None] * 3
    assert engine.evaluate(UNSEEN, list(figures)) == [True] * 3
    engine.set_viewport(900, 720)
    engine.evaluate("() => new Promise((r) => setTimeout(r, 400))")  # Plotly follows resizes later
    choose(engine, "pitfall", "no_layernorm")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-pitfall-correct"), logits, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-pitfall"), skipped, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-pitfall-diff"), skipped - logits,
                               rtol=0, atol=1e-12)
    off = engine.evaluate(FITS, list(figures))
    assert all(0 <= d <= 1 for d in off), off
    assert layout_problems(engine) == []
    # another mistake: the same figures, recoloured and retitled in place (js/heatmaps.js)
    choose(engine, "pitfall", "softmax_inside")
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-pitfall"), exp / exp.sum(axis=1, keepdims=True),
                               rtol=0, atol=1e-12)
    title = "(id) => document.querySelector('#' + id + ' .gtitle').textContent"
    assert engine.evaluate(title, "heatmap-pitfall") == TITLES["softmax_inside"]
    assert layout_problems(engine) == []
    choose(engine, "variant", "affine")  # and another head beside it
    app.assert_axe_clean("a mistake and another head chosen (900 x 720)")
    choose(engine, "variant", "")
    choose(engine, "pitfall", "")
    app.assert_clean()


def test_layout_at_desktop_size(app):
    engine = app.start()
    assert layout_problems(engine) == []
    app.assert_clean()


# A figure saved for slides (js/figure-export.js, js/figure-menu.js) takes the same path in every
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
@pytest.mark.parametrize("host", ["pyscript"], indirect=True)
def test_a_heatmap_saved_for_slides_as_svg_and_pngs(app, host):
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
@pytest.mark.parametrize("host", ["pyscript"], indirect=True)
def test_a_handout_printed_on_a4_and_letter(app, host, engines):
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
# (js/heatmap-bitmap.js: fillCells) instead of scaling the one-pixel-per-cell bitmap onto the
# screen's canvas. Compared here with that scaling, on canvases of odd sizes, at the full view and
# zoomed to fractions of cells: a pixel may differ only where the two round a cell's edge apart.
CELL_FILL_VIEWS = [  # left, top (axis units, the first cell's centre is 0), spans, canvas px
    (-0.5, -0.5, None, None, 301, 157), (-0.13, 0.21, 2.37, 1.61, 523, 277),
    (0.7, -0.5, 1.9, 3.3, 411, 389), (-0.5, -0.5, None, None, 600, 333)]


def test_heatmap_cells_filled_one_by_one_are_where_the_scaled_bitmap_puts_them(app):
    engine = app.start()
    far = engine.evaluate("""async (views) => {
        const { fillCells } = await import('./js/heatmap-bitmap.js');
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


def settle_layout(engine):
    """Two animation frames, then until the figures are redrawn for the new width."""
    engine.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    engine.wait_for("() => !document.querySelector('.js-plotly-plot .plot-container') ||"
                    " document.getElementById('heatmap-logits').getBoundingClientRect().width <= innerWidth")


FIGURES = ("heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits")


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
        assert layout_problems(engine) == []
        edit(engine, "cls[0,1]", "2", then="Tab")
        cls = CLS.copy()
        cls[0, 1] = 2
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    finally:
        text_size(engine, large=False)
    app.assert_clean()


def test_phone_width_works_and_nothing_is_cut_off(app):
    engine = app.start(viewport=(390, 844))
    settle_layout(engine)
    width = engine.evaluate("() => innerWidth")
    assert width == 390 or 390 < width <= engine.narrowest, width  # MiniBrowser: 447 at least
    assert layout_problems(engine) == []
    edit(engine, "cls[1,2]", "2", then="Tab")
    cls = CLS.copy()
    cls[1, 2] = 2
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    app.assert_clean()


# ---- the tiny ViT's digit panel -------------------------------------------------------------

@pytest.fixture(scope="module")
def model():
    return load_tiny_vit()


# The pad is below the pipeline: in view before a pointer reaches it or its buttons (WebDriver's
# actions do not scroll).
PAD_IN_VIEW = """() => new Promise((done) => {
    document.getElementById('digit-pad').scrollIntoView({block: 'center', behavior: 'instant'});
    requestAnimationFrame(() => requestAnimationFrame(done));
})"""


def pad_pixels(engine):
    values = engine.evaluate("""() => Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'),
                                                 (c) => Number(c.dataset.value))""")
    assert len(values) == 64
    return np.array(values, float).reshape(8, 8)


def check_digit_shown(engine, model):
    """Every stage shows the model's numbers for the image it reads (beside the pad); returns
    the logits."""
    images = model_pixels(engine)[None]
    z_L = model.encode(images)
    logits = classification_head(z_L, model.W_head)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-cls"), z_L[:, 0, :], atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), logits, atol=1e-12)
    return logits


def test_a_finger_taps_a_pixel_on_a_phone(app, model):
    engine = app.start(viewport=(390, 844))
    settle_layout(engine)
    engine.evaluate(PAD_IN_VIEW)
    engine.tap("#digit-pad", at=(2.5 / 8, 5.5 / 8))  # (x, y): column 2, row 5
    engine.wait_for("""() => document.getElementById('real-vit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'""")
    pixels = pad_pixels(engine)
    assert pixels[5, 2] == 16 and pixels.sum() == 16  # a dot in a pixel's middle inks it alone
    check_digit_shown(engine, model)
    app.assert_clean()


def test_a_drawn_digit_is_read(app, model):
    engine = app.start()
    engine.evaluate(PAD_IN_VIEW)  # and its Clear button, below it
    engine.click("#digit-clear")  # the pad keeps an earlier drawing (a link does not clear it)
    # The blank pad is drawn through the tiny ViT: the pipeline above the pad grows (the encoder
    # output), so the pad moves down until that answer is drawn.
    engine.wait_for("""() => Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'))
        .every((c) => Number(c.dataset.value) === 0)
        && document.getElementById('real-vit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'""")
    engine.evaluate(PAD_IN_VIEW)  # again: WebKit's WebDriver scrolls the button it clicks
    rows = [0.5, 2.5, 4.5, 7.5]  # a vertical stroke down column 4 through cell centres: a "1"
    engine.drag("#digit-pad", [(4.5 / 8, r / 8) for r in rows])
    engine.wait_for("""() => document.getElementById('real-vit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'
        && Number(document.querySelectorAll('#digit-pad [role=gridcell]')[60].dataset.value) === 16""")
    pixels = pad_pixels(engine)
    assert pixels[:, 4].min() == 16 and pixels[:, :2].max() == 0
    logits = check_digit_shown(engine, model)
    assert int(logits.argmax()) == 1
    assert engine.evaluate("() => document.getElementById('digit-prediction').textContent"
                           ).startswith("1 (softmax ")
    # the head at every depth: LayerNorm and W_head on the CLS row after each block, from a
    # forward pass written out loop by loop (tests/reference_vit.py)
    image = model_pixels(engine)[None]
    _, _, hidden = reference_encode(model.params, image, model.patch_size, model.heads)
    lens = heatmap_z(engine, "heatmap-lens")
    want = [reference_head(hidden[l], model.W_head)[0] for l in range(model.depth + 1)]
    np.testing.assert_allclose(lens, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lens[-1], logits[0], atol=1e-12)
    app.assert_clean()


# ---- fine-tuning ----------------------------------------------------------------------------

def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mean_cross_entropy_gradient(h_cls, w, y):
    """d(mean cross-entropy of softmax(LayerNorm(h_cls) @ w) against the labels y)/dw, in NumPy."""
    h_hat = head(h_cls, w)[0]
    delta = softmax(h_hat @ w)
    delta[np.arange(len(y)), y] -= 1.0
    return h_hat.T @ delta / len(y)


IDLE = """() => { const s = document.getElementById('finetune').dataset;
    return s.busy === 'false' && s.playing === 'false'; }"""


def test_a_fine_tune_step_is_sgd_written_here(app):
    engine = app.start()
    # dW_head, made ahead while the fine-tuning panel was not used, shown by its first Step: the
    # gradient of the mean cross-entropy at W_head after one SGD step (lr 0.1) from the worked
    # example, its labels as the page shows them
    engine.wait_for("() => document.documentElement.dataset.ahead === 'done'", timeout=90)
    assert engine.evaluate(UNSEEN, ["heatmap-dw"]) == [True]
    y = np.array([int(v) for v in engine.evaluate(
        "() => Array.from(document.querySelectorAll('#ft-labels input'), (i) => i.value)")])
    before = renders(engine)
    engine.click("#ft-step")
    wait_render_after(engine, before)
    engine.wait_for("() => document.getElementById('heatmap-dw').data !== undefined")
    w1 = W - 0.1 * mean_cross_entropy_gradient(CLS, W, y)
    dw = mean_cross_entropy_gradient(CLS, w1, y)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-dw"), dw, rtol=1e-9, atol=1e-12)
    got = engine.evaluate(SHOWN, "heatmap-dw")
    assert got["key"] and got["painted"] and got["numberInCell"] and got["rowsTitle"] == "feature d", got
    assert got["title"].startswith("dW_head = ")
    np.testing.assert_allclose(shown_numbers(got["table"]), dw, rtol=0, atol=5.01e-5)
    assert engine.evaluate(UNSEEN, ["heatmap-dw"]) == [False]
    assert 0 <= engine.evaluate(FITS, ["heatmap-dw"])[0] <= 1
    assert layout_settled(engine) == []
    # then the 60-sample class means, from W_head = 0
    engine.click("#ft-load-means")
    engine.wait_for("() => document.querySelectorAll('#ft-labels input').length === 60", timeout=60)
    engine.wait_for(IDLE, timeout=60)
    h_cls = heatmap_z(engine, "heatmap-cls")
    y = np.array([int(v) for v in engine.evaluate(
        "() => Array.from(document.querySelectorAll('#ft-labels input'), (i) => i.value)")])
    assert h_cls.shape == (60, 64) and not heatmap_z(engine, "heatmap-w").any()
    steps = int(engine.evaluate("() => Number(document.getElementById('finetune').dataset.runSteps || 0)"))
    engine.click("#ft-step")
    engine.wait_for("(n) => Number(document.getElementById('finetune').dataset.runSteps) > n",
                    steps, timeout=60)
    engine.wait_for(IDLE, timeout=60)
    h_hat = head(h_cls, np.zeros((64, 10)))[0]
    w1 = -0.1 * mean_cross_entropy_gradient(h_cls, np.zeros((64, 10)), y)
    losses = [float(-np.mean(np.log(softmax(h_hat @ w)[np.arange(60), y])))
              for w in (np.zeros((64, 10)), w1)]
    shown = engine.evaluate("() => Array.from(document.getElementById('loss-curve').data[0].y)")
    np.testing.assert_allclose(shown, losses, rtol=1e-9, atol=1e-12)
    drawn, per_pixel = curve_drawn(engine)  # the curve on screen, read back from the drawing
    np.testing.assert_allclose(drawn[-2:, 0], [steps, steps + 1], atol=0.1)
    np.testing.assert_allclose(drawn[-2:, 1], losses, atol=2 * per_pixel)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-w"), w1, rtol=1e-9, atol=1e-12)
    app.assert_axe_clean("the fine-tuning panel: 60 samples loaded, a step taken")
    app.assert_clean()


# ---- a lecturer's own model file ------------------------------------------------------------

def real_head(cls, w, gamma, beta, b, eps=1e-6):
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return (gamma * (cls - mu) / np.sqrt(var + eps) + beta) @ w + b


def file_outcome(engine, before):
    """'loaded' or 'refused' (with the alert) once the page has answered the file; a loaded one
    is drawn (a render after `before`)."""
    engine.wait_for("() => ['loaded', 'refused'].includes(document.documentElement.dataset.modelFile)",
                    timeout=60)
    outcome = engine.evaluate("() => document.documentElement.dataset.modelFile")
    if outcome == "loaded":
        wait_render_after(engine, before)
    return outcome, alerts(engine)


def test_a_model_file_through_the_file_chooser_then_a_matrix_dropped(app, tmp_path):
    engine = app.start()
    rng = np.random.RandomState(31)
    cls, w = rng.standard_normal((3, 6)), rng.standard_normal((6, 5)).astype(np.float32)
    gamma, beta, b = 1 + rng.standard_normal(6) * 0.5, rng.standard_normal(6), rng.standard_normal(5) * 2
    np.savez(str(tmp_path / "lecture.npz"), W_head=w, cls=cls, ln_gamma=gamma, ln_beta=beta, b_head=b)
    before = renders(engine)
    engine.set_files("#model-file", str(tmp_path / "lecture.npz"))
    assert file_outcome(engine, before) == ("loaded", "")
    w = w.astype(float)
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    # the pipeline shows the model's own head: LayerNorm with its gamma and beta, its bias
    own = real_head(cls, w, gamma, beta, b)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), own, atol=1e-12)
    h_hat = head(cls, w)[0]
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-y"), h_hat * gamma + beta, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-bias"), [b], atol=0)
    # the problem's head one click away, beside it; and in the pipeline, at the control's word
    choose(engine, "variant", "page_head")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-variant"), head(cls, w)[1], atol=1e-12)
    choose(engine, "head-shown", "page")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w)[1], atol=1e-12)
    choose(engine, "head-shown", "model")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), own, atol=1e-12)
    assert engine.evaluate("() => document.getElementById('model-file-status').textContent"
                           ).startswith("Loaded from lecture.npz: W_head (6 \u00d7 5)")
    # a bad file: refused in words, nothing changes
    np.save(str(tmp_path / "bad.npy"), np.full((6, 5), np.nan))
    engine.click(cell("W_head[0,0]"))  # a .npy fills the grid that has focus
    engine.press("Escape")
    engine.set_files("#model-file", str(tmp_path / "bad.npy"))
    outcome, alert = file_outcome(engine, renders(engine))
    assert outcome == "refused" and "'bad.npy': W_head[0,0] is NaN" in alert, alert
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    # a W_head dropped on the page, into the grid that had focus
    w2 = np.round(rng.standard_normal((6, 5)), 2)
    np.save(str(tmp_path / "w2.npy"), w2)
    before = renders(engine)
    engine.evaluate("() => { document.documentElement.dataset.modelFile = 'dropping'; }")
    engine.drop_file("#stage-w", str(tmp_path / "w2.npy"))
    assert file_outcome(engine, before) == ("loaded", "")
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w2)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w2)[1], atol=1e-12)
    # a W_head alone ends the model's own head; so does a link (a new session)
    assert engine.evaluate("() => document.documentElement.dataset.realHead") != "true"
    assert engine.evaluate("() => document.getElementById('head-choice').hidden") is True
    app.assert_clean()


# ---- axe-core: the states no scenario above reaches (docs/accessibility-checks.md) ---------

def load_preset(engine, name):
    """Choose the preset `name` in the toolbar and press Load (a new session: every panel redrawn)."""
    engine.evaluate("""(name) => { const s = document.getElementById('preset'); s.value = name;
        s.dispatchEvent(new Event('change', { bubbles: true })); }""", name)
    before = renders(engine)
    engine.click("#load-preset")
    wait_render_after(engine, before, timeout=90)
    engine.wait_for(SETTLED, timeout=30)


@pytest.mark.parametrize("host", ["pyscript"], indirect=True)  # the markup is the same on both
def test_axe_while_an_invalid_entry_is_typed_and_in_the_large_presets(app, host):
    """axe-core's WCAG A/AA rules (App.assert_axe_clean) in the states no scenario above leaves
    the page in: "abc" typed key by key into a cell; the full encoder output; the ViT-B/16
    preset. (The others, on the way: the worked example as booted, a mistake and another head,
    the walk-through, the fine-tuning panel; the dark scheme and the embed view in the tests
    below that boot pages of their own.) Then a check that axe reports what it should in this
    engine: a button without a name."""
    engine = app.start()
    engine.click(cell("cls[0,0]"))
    engine.type_keys("abc")
    engine.wait_for("() => document.getElementById('alert').textContent.includes(\"'abc'\")")
    app.assert_axe_clean("an invalid entry being typed")
    engine.press("Escape")  # the entry undone (it never reached Python: no render)
    engine.wait_for("(s) => document.querySelector(s).getAttribute('aria-invalid') !== 'true'",
                    cell("cls[0,0]"))
    load_preset(engine, "encoder")
    app.assert_axe_clean("the full encoder output")
    load_preset(engine, "vit-b16")
    app.assert_axe_clean("the ViT-B/16 preset")
    assert axe.catches_a_nameless_button(engine)
    app.assert_clean()


# ---- scenarios that boot a page of their own (last: they leave the shared one) --------------

EVAL_DURING_BOOT = """() => { try { eval("1"); } catch (e) { window.__evalRefused = true; }
    const root = document.documentElement;
    return root.dataset.ready === 'true' || root.dataset.bootFailed === 'true'; }"""


@pytest.fixture
def course_site(tmp_path, reporting_sites, host):
    """A course's page on another origin (another port) with the explorer in an 800 x 600 iframe."""
    src = reporting_sites.url(host) + "index.html?embed=1"
    (tmp_path / "course.html").write_text(
        '<!doctype html><link rel="icon" href="data:,"><title>Course</title>'
        '<iframe id="f" src="%s" width="800" height="600" title="ViT head explorer"></iframe>' % src)
    server, url = serve_in_thread(str(tmp_path), policy=None)
    yield url + "course.html"
    server.shutdown()
    server.server_close()


# What a person reads in dark mode: text on its background, each pair as the page shows it.
DARK_PAIRS = r"""() => {
    const colours = (el) => { const s = getComputedStyle(el); return [s.color, s.backgroundColor]; };
    const page = getComputedStyle(document.body).backgroundColor;
    const on = (sel) => { const el = document.querySelector(sel); const [ink, back] = colours(el);
                          return [sel, ink, /rgba\(.*, 0\)$|transparent/.test(back) ? page : back]; };
    return [on('body'), on('[aria-label="cls[0,1]"]'), on('[aria-label="W_head[0,0]"]'),
            on('#preset'), on('#load-preset'), on('#stats td'),
            ['heatmap-logits ink', document.getElementById('heatmap-logits').layout.font.color, page]];
}"""


def test_dark_mode_is_legible_and_laid_out(engine_name, reporting_sites, request):
    """The system in dark mode, a new browser of each engine (its form controls may follow the
    system's theme): dark paper; the text, the grids' cells, the menus, the buttons, the tables
    and the figures' ink legible on what is behind each (WCAG AA, 4.5:1); nothing cut off or
    overlapping; a link's logits exact. On the PyScript host: the colours are the page's own."""
    playwright = request.getfixturevalue("playwright") if engine_name == "chromium" else None
    try:
        engine = launch(engine_name, playwright, dark=True)
    except EngineError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        rng = np.random.RandomState(11)
        cls, w = np.round(rng.standard_normal((2, 4)), 3), np.round(rng.standard_normal((4, 3)), 3)
        engine.goto(reporting_sites.url("pyscript") + "index.html" +
                    state_fragment({"cls": cls.tolist(), "W_head": w.tolist()}))
        wait_ready(engine)
        engine.wait_for("() => !!(document.getElementById('heatmap-logits').layout || {}).font")
        settle_layout(engine)
        assert engine.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches")
        pairs = engine.evaluate(DARK_PAIRS)
        assert luminance(rgb(pairs[0][2])) < 0.05, pairs[0]
        ratios = [(what, ink, back, round(contrast(rgb(ink), rgb(back)), 2))
                  for what, ink, back in pairs]
        low = [pair for pair in ratios if pair[3] < 4.5]
        assert low == [], low
        assert layout_problems(engine) == []
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w)[1], rtol=0, atol=1e-12)
        # and every WCAG A/AA rule of axe-core (docs/accessibility-checks.md)
        dark = axe.check(engine, axe.source(), "dark mode, a link's state")
        assert axe.violations([dark]) == {}, axe.report(dark)
        assert engine.console_errors() == []
    finally:
        engine.goto("about:blank")
        engine.close()


def test_in_a_cross_origin_iframe_a_foreign_csp_violation_does_not_stop_the_boot(app, course_site):
    """The explorer boots in an 800 x 600 iframe of another site while something else in its
    document (an extension, an automation tool) calls eval() again and again; each call is
    refused (no 'unsafe-eval') and is a violation the page did not cause. It must boot, and an
    edit inside the frame must show NumPy's logits. (One boot checks both: each is a cold boot.)
    On the PyScript host, axe-core's WCAG A/AA rules then run in the frame: the embed view."""
    engine = app.engine
    reports = len(app.reports)
    engine.goto(course_site)  # its load: the frame's document has loaded, Python is starting
    engine.enter_frame("#f")
    try:
        engine.wait_for(EVAL_DURING_BOOT, timeout=120, every_ms=50)
        wait_ready(engine, timeout=5)
        edit(engine, "cls[0,0]", "1", then="Tab")
        cls = CLS.copy()
        cls[0, 0] = 1
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1],
                                   atol=1e-12)
        assert engine.evaluate("() => innerWidth") == 800
        assert engine.evaluate("() => window.__evalRefused === true"), "eval() was not refused"
        found = [r.get("csp-report", r) for r in app.reports[reports:]]
        assert [violation(r) for r in found if r.get("blocked-uri") != "eval"] == []
        app.assert_axe_clean("the embed view (?embed=1), an edit made, in an 800 x 600 cross-origin iframe")
    finally:
        engine.leave_frame()


# A policy stricter than the site's own, as a server or an embedding page may send: what each
# engine refuses, and what the alert must say.
STRICTER = {
    # Firefox refuses the module worker's own imports (boot/*.mjs), Chromium and WebKit nothing
    # more than the policy names: all must name worker-src and 'self' or boot.
    "worker-src without 'self'": (
        lambda p, host: p.replace("worker-src blob: 'self'", "worker-src blob:") if host == "pyscript"
        else p.replace("worker-src 'self'", "worker-src 'none'"),
        "must allow 'self' in worker-src."),
    "no 'wasm-unsafe-eval'": (
        lambda p, host: p.replace(" 'wasm-unsafe-eval'", ""),
        "must allow 'wasm-unsafe-eval' in script-src."),
}


@pytest.mark.parametrize("case", list(STRICTER))
def test_a_stricter_policy_is_named_in_the_alert_or_the_page_boots(app, case, host):
    """The page boots, or its alert names the directive and the source to allow: never the
    "files may be incomplete" of a download that failed."""
    stricter, words = STRICTER[case]
    folder = os.path.join(ROOT, "build", "test-" + host)
    policy = stricter(site_policy(folder), host)
    assert policy != site_policy(folder)
    server, base = serve_in_thread(folder, policy=policy)
    engine = app.engine
    try:
        engine.goto(base + "index.html", wait="commit")
        # (just after the commit the new document may not have its <html> element yet)
        engine.wait_for("() => { const root = document.documentElement; return !!root && "
                        "(root.dataset.ready === 'true' || root.dataset.bootFailed === 'true'); }",
                        timeout=120)
        if engine.evaluate("() => document.documentElement.dataset.ready") == "true":
            # this engine does not need what the policy took away (Chromium and WebKit check a
            # module worker's imports against script-src, which allows 'self')
            assert case == "worker-src without 'self'" and engine.name != "firefox", engine.name
            return
        # A module worker refused by worker-src (Firefox) fails without a word on why: the page
        # asks the policy itself before it says the boot failed (boot/pyscript.js), so the
        # alert is right from the moment the failure is shown, never "files may be incomplete"
        text = alerts(engine)
        assert text.startswith("The page's Content-Security-Policy blocked ") and words in text, text
        assert "incomplete" not in text, text
    finally:
        # leave the page first: a download still in flight (the page's own check of the NumPy
        # wheel) would be cut by the server's shutdown, an error in the next test's console
        engine.goto("about:blank")
        server.shutdown()
        server.server_close()
