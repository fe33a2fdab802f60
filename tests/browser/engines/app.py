"""The page booted once in each engine on each host, for the scenarios of
tests/browser/test_engines*.py (their fixtures are in tests/browser/conftest.py: `app`,
`engine_name`, `engine_host`, `reporting_sites`, one boot per engine and host for all the files),
and the helpers those scenarios share. What the page SHOWS is checked against NumPy written out
in the tests.
"""
import functools
import json
import os
import re
import threading
import time

import numpy as np
import pytest

from buildtools.serve import SiteHandler, SiteServer, site_policy
from pycore.explorer.comparisons.registry import of_kind
from reference import WORKED_CLS, WORKED_W_HEAD

from . import ENGINES, HOSTS, axe
from .base import EngineError
from .kit import layout_problems, load_state, renders, wait_ready, wait_render_after, watch


# Where each scenario runs. The fallback host serves the page's own markup, CSS and JavaScript,
# as the PyScript host does; only the Python behind it differs (Pyodide 0.17, NumPy 1.17), and a
# worker's Python answers alike whichever engine runs it. Chromium has a suite of its own besides
# (Playwright: tests/browser/test_page_*.py, test_csp.py, test_hosts.py, on both hosts).
# - PAGE: a scenario about the page runs under the PyScript host.
# - BEYOND_CHROMIUM: one whose checks Chromium's suite makes there runs in Firefox and WebKit
#   only; the scenario names the Chromium test that makes them.
# - HOSTS_BEYOND_CHROMIUM: both hosts in Firefox and WebKit, the PyScript host in Chromium (its
#   fallback host: the Chromium test named).
# - FALLBACK_IN_CHROMIUM: the PyScript host in every engine and the fallback host in Chromium.
PAGE = pytest.mark.parametrize("engine_host", ["pyscript"], indirect=True)
BEYOND_CHROMIUM = pytest.mark.parametrize("engine_name", ["firefox", "webkit"], indirect=True)
HOSTS_BEYOND_CHROMIUM = pytest.mark.parametrize(
    "engine_name, engine_host",
    [("chromium", "pyscript")] + [(name, host) for name in ENGINES if name != "chromium" for host in HOSTS],
    indirect=True)
FALLBACK_IN_CHROMIUM = pytest.mark.parametrize(
    "engine_name, engine_host", [(name, "pyscript") for name in ENGINES] + [("chromium", "fallback")],
    indirect=True)
CLS, W = np.array(WORKED_CLS, float), np.array(WORKED_W_HEAD, float)
REPORT_PATH = "/__csp-report"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


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


def made_on_purpose(report):
    """Whether a report is of the eval() calls test_engines_then_own_pages.py makes on purpose
    in its embedded page: the browser may post it after that scenario has ended."""
    r = report.get("csp-report", report)
    return r.get("blocked-uri") == "eval" and "embed=1" in (r.get("document-uri") or "")


class App:
    """The page booted once in one engine on one host; scenarios check what happened since
    they started (console errors, CSP reports)."""

    def __init__(self, engine, base, reports, host="pyscript"):
        # Booted by the first start(): a scenario that loads a page of its own (in an iframe,
        # under a stricter policy) uses the engine alone and costs no boot.
        self.engine, self.base, self.reports, self.host = engine, base, reports, host
        self.booted, self.boot_error, self.scenarios = False, None, 0
        self.errors_seen, self.reports_at_boot = 0, len(reports)
        self.reports_seen = self.reports_at_boot

    def boot(self):
        self.booted, self.boot_error = True, None
        self.reports_at_boot = self.reports_seen = len(self.reports)
        self.errors_seen = 0
        self.scenarios = 0  # started since this boot
        try:
            self.engine.goto(self.base + "index.html")
            wait_ready(self.engine)
            watch(self.engine)  # what a failed wait reports (kit.snapshot)
        except EngineError as e:
            self.boot_error = str(e)

    def start(self, viewport=(1280, 720), fresh=False):
        """Before a scenario: the page must have booted (again, if a scenario of its own page
        left it, or if `fresh` and a scenario has used it since it booted); back to the worked
        example."""
        if not self.booted:
            self.boot()
        elif not self.boot_error and (fresh and self.scenarios or not self.engine.evaluate(
                "() => location.href").startswith(self.base + "index.html")):
            self.boot()
        self.scenarios += 1
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
        found += ["CSP violation: %s" % violation(r) for r in self.reports[self.reports_seen:]
                  if not made_on_purpose(r)]
        return found

    def assert_clean(self):
        assert self.problems() == [], self.problems()

    def assert_axe_clean(self, state):
        """On the PyScript host (the page is the same on the fallback host): every WCAG 2.x A and AA
        rule of axe-core on the page as it is now, in `state`; any violation fails, whatever its
        impact; "incomplete" results are printed (docs/accessibility-checks.md)."""
        if self.host == "pyscript":
            found = axe.check(self.engine, axe.source(), state)
            assert axe.violations([found]) == {}, axe.report(found)


def choose(engine, menu, value):
    """Choose `value` in the <select> `menu` (as its change event says) and wait for the redraw."""
    before = renders(engine)
    engine.evaluate("""(id, value) => { const s = document.getElementById(id); s.value = value;
        s.dispatchEvent(new Event('change', { bubbles: true })); }""", menu, value)
    wait_render_after(engine, before)


TITLES = {c.key: c.title for c in of_kind("mistake")}


# Whether each figure is out of sight and takes no room: hidden with nothing chosen (css/pipeline.css),
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


# Resolves once the Large text button has stood still for three frames (the page may still move
# after an edit: a redraw's new heights, a Tab's focus brought into view at the next frame; a
# click aimed while it moves can land beside it, as it did once in WebKit).
BUTTON_STILL = """() => new Promise((resolve) => {
    let last = '', same = 0;
    const look = () => {
        const r = document.getElementById('text-size').getBoundingClientRect();
        const now = [r.left, r.top, scrollX, scrollY].join();
        same = now === last ? same + 1 : 0;
        last = now;
        if (same >= 3) resolve(); else requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
})"""


def text_size(engine, large):
    """Click the toolbar's Large text and wait for the text size asked for."""
    engine.evaluate(BUTTON_STILL)
    engine.click("#text-size")
    try:
        engine.wait_for("(large) => document.documentElement.classList.contains('large') === large",
                        large, timeout=10)
    except EngineError as e:
        raise EngineError("%s; the click met %s" % (e, json.dumps(engine.evaluate(AT_TEXT_SIZE))))


def settled(find, seconds=3):
    """What `find()` finds once it finds nothing, or what it still finds after `seconds`: what
    the page shows a moment after the answer a test waited for (Plotly resizes a figure 100 ms
    after its box changed, a title is rewrapped 250 ms after; Plotly may lay a figure's margins
    out again after its promise resolved: seen in WebKit on a loaded machine). A lasting
    problem is still found."""
    deadline = time.monotonic() + seconds
    while True:
        problems = find()
        if not problems or time.monotonic() > deadline:
            return problems
        time.sleep(0.1)


def layout_settled(engine, seconds=3):
    """The layout check (kit.layout_problems), settled; `engine` is an engine session or a
    Playwright page."""
    return settled(lambda: layout_problems(engine), seconds)


def numbers_in(text):
    return [float(t) for t in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text.replace("\u2212", "-"))]


def shown_numbers(table):
    return np.array([[float(t.replace("\u2212", "-")) for t in row] for row in table])


def settle_layout(engine):
    """Two animation frames, then until the figures are redrawn for the new width."""
    engine.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    engine.wait_for("() => !document.querySelector('.js-plotly-plot .plot-container') ||"
                    " document.getElementById('heatmap-logits').getBoundingClientRect().width <= innerWidth")
