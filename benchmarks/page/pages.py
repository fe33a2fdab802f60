"""The pages page_bench.py drives: the explorer through its testable interface (docs/interface.md),
the Plotly floor, the runtime floors, each in a fresh browser context with the timing
instrumentation (page/assets/instrument.js) installed before its own scripts."""
import time

from .common import ASSETS, BOOT_TIMEOUT_MS, EDIT_VALUES, RENDER_TIMEOUT_MS, BenchError


class PageErrors:
    """Uncaught errors and console errors of the pages, reported at the end (they can skew times)."""

    def __init__(self):
        self.items = []

    def watch(self, page, name):
        page.on("pageerror", lambda err: self.items.append("%s: %s" % (name, err)))
        page.on("response", lambda r: r.status >= 400 and self.items.append(
            "%s: HTTP %d for %s" % (name, r.status, r.url)))
        page.on("console", lambda msg: msg.type == "error" and not msg.text.startswith(
            "Failed to load resource") and self.items.append(
            "%s console: %s" % (name, msg.text.strip().splitlines()[0] if msg.text.strip() else "")))


def new_page(browser, errors, name):
    """A page in a fresh browser context (own cache, own storage), instrumented before load."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(path=str(ASSETS / "instrument.js"))
    page = context.new_page()
    errors.watch(page, name)
    return page


def settle(page):
    """Let two animation frames pass, so work a redraw left for later does not spill into the next."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def wait_ready(page, timeout=BOOT_TIMEOUT_MS):
    """Wait for the readiness mark (or a boot failure); returns the page's marks."""
    page.wait_for_function("() => window.__bench && (window.__bench.marks.ready !== undefined"
                           " || window.__bench.marks.bootFailed !== undefined)", timeout=timeout)
    marks = page.evaluate("() => window.__bench.marks")
    if "ready" not in marks:
        alert = page.evaluate("() => (document.getElementById('alert') || {}).textContent || ''")
        raise BenchError("%s did not start: %s" % (page.url, alert.strip() or "boot failed"))
    return marks


RESOURCES_JS = """() => {
    const end = (pattern) => {
        const e = performance.getEntriesByType('resource').filter(r => pattern.test(r.name));
        return e.length ? Math.max(...e.map(r => r.responseEnd)) : null;
    };
    return {runtimeFiles: end(/pyodide[.]asm[.](wasm|data)$/), numpyData: end(/numpy[.]data$/),
            plotlyFile: end(/[/]vendor[/]plotly[/][^/]+[.]js$/)};
}"""


LONG_TASKS_JS = """() => {
    const tasks = (window.__bench && window.__bench.longTasks) || [];
    return {longestTask: tasks.reduce((m, t) => Math.max(m, t.duration), 0),
            blocked: tasks.reduce((s, t) => s + Math.max(0, t.duration - 50), 0)};
}"""


def boot_once(browser, errors, url, name, second_visit=False):
    """One cold navigation; returns the page's milestones (ms since navigation start) and its
    long tasks until ready (longest, and total blocking time: the sum of each task's time over
    50 ms). ``second_visit``: the page is first booted in the same fresh context (untimed) and
    left, so that the timed visit finds the HTTP cache and compiled-code caches it filled (as
    for a student who opened it yesterday)."""
    page = new_page(browser, errors, name)
    try:
        if second_visit:
            page.goto(url, wait_until="commit", timeout=BOOT_TIMEOUT_MS)
            wait_ready(page)
            page.wait_for_timeout(3000)  # what the page loads once ready (Plotly.js, KaTeX) too
            page.goto("about:blank")
        page.goto(url, wait_until="commit", timeout=BOOT_TIMEOUT_MS)
        marks = wait_ready(page)
        marks.update({k: v for k, v in page.evaluate(RESOURCES_JS).items() if v is not None})
        marks.update(page.evaluate(LONG_TASKS_JS))
        return marks
    finally:
        page.context.close()


class Explorer:
    """The explorer page, driven through its testable interface (docs/interface.md)."""

    def __init__(self, browser, errors, base):
        self.page = new_page(browser, errors, "explorer")
        self.page.goto(base + "index.html", wait_until="commit", timeout=BOOT_TIMEOUT_MS)
        wait_ready(self.page)
        # The edits are timed once Python's warm-up and the figures made ahead (web/js/runtime/warmup.js)
        # are over, as for a person who reads the page for a couple of seconds before typing.
        t0 = time.perf_counter()
        self.page.wait_for_function("() => { const d = document.documentElement.dataset;"
                                    " return ['done', 'stopped', undefined].includes(d.warmUp) &&"
                                    " ['done', undefined].includes(d.ahead); }", timeout=RENDER_TIMEOUT_MS)
        self.warm_up = (self.page.evaluate("() => document.documentElement.dataset.warmUp || 'none'"),
                        time.perf_counter() - t0)
        self.next_value = {}  # cell label -> index into EDIT_VALUES of its next edit

    def renders(self):
        return int(self.page.evaluate("() => Number(document.documentElement.dataset.renders || 0)"))

    def arm_render_wait(self, count):
        """Before an action: a promise (window.__bench.rendered) that settles once the page has
        counted a render after `count`. It waits on a MutationObserver, not by polling: Playwright's
        wait_for_function polls on every animation frame, which would make the browser render
        frames, on the page's main thread, while Python computes the answer in its worker."""
        self.page.evaluate(
            """n => { const root = document.documentElement;
                window.__bench.rendered = new Promise((resolve) => {
                  const done = () => Number(root.dataset.renders || 0) > n;
                  if (done()) return resolve();
                  const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); resolve(); } });
                  mo.observe(root, { attributes: true, attributeFilter: ["data-renders"] });
                }); }""", count)

    def wait_render_after(self, count):
        """After an action armed with arm_render_wait(count)."""
        done = self.page.evaluate(
            """ms => new Promise((resolve) => {
                 const t = setTimeout(() => resolve(false), ms);
                 window.__bench.rendered.then(() => { clearTimeout(t); resolve(true); });
               })""", RENDER_TIMEOUT_MS)
        if not done:
            raise BenchError("no render within %d s after %d renders" % (RENDER_TIMEOUT_MS // 1000, count))

    def load_preset(self, name):
        """Load a preset with the page's own controls; returns the page's lastRenderMs for it."""
        before = self.renders()
        self.page.select_option("#preset", name)
        self.arm_render_wait(before)
        self.page.click("#load-preset")
        self.wait_render_after(before)
        settle(self.page)
        return float(self.page.evaluate("() => document.documentElement.dataset.lastRenderMs"))

    def shape(self, element_id):
        """(rows, cols) of a heatmap's data[0].z; None for a plot without z (a chart)."""
        shape = self.page.evaluate(
            """id => { const d = (document.getElementById(id).data || [])[0], z = d && d.z;
                       return z ? [z.length, z.length ? z[0].length : 0] : null; }""", element_id)
        return tuple(shape) if shape else None

    def edit(self, label, capture=False):
        """Fill one cell with a new valid number and wait for the render cycle it causes.

        Returns the page's lastRenderMs and what the instrumentation saw during the cycle.
        """
        cell = self.page.get_by_label(label, exact=True)
        k = self.next_value.get(label)
        if k is None:  # first edit of this cell: start with a value it does not hold already
            k = 1 if _same_number(cell.input_value(), EDIT_VALUES[0]) else 0
        self.next_value[label] = 1 - k
        before = self.page.evaluate(
            """capture => {
                const b = window.__bench;
                b.reacts = []; b.purges = []; b.katexMs = 0; b.pythonMs = 0; b.inputAt = null;
                b.answerAt = null; b.workerMs = 0; b.resetTraffic();
                b.frameAt = null; b.capture = capture;
                return Number(document.documentElement.dataset.renders || 0);
            }""", capture)
        self.arm_render_wait(before)
        cell.fill(EDIT_VALUES[k])
        self.wait_render_after(before)
        self.page.wait_for_function("() => window.__bench.frameAt !== null", timeout=RENDER_TIMEOUT_MS)
        result = self.page.evaluate(
            """() => { const b = window.__bench; b.capture = false;
                       return {ms: Number(document.documentElement.dataset.lastRenderMs),
                               reacts: b.reacts, purges: b.purges, katexMs: b.katexMs,
                               pythonMs: b.pythonMs, inputAt: b.inputAt, answerAt: b.answerAt,
                               workerMs: b.workerMs, traffic: b.traffic,
                               frameMs: b.frameAt - b.inputAt}; }""")
        settle(self.page)
        return result

    def captured_calls(self, order):
        """The react arguments captured by the last capture edit, in the explorer's call order."""
        calls = {c["id"]: c for c in self.page.evaluate("() => window.__bench.exportCaptured()")}
        return [calls[i] for i in order]


class PlotlyFloor:
    """The Plotly-only page, replaying the explorer's captured react calls on divs of its own."""

    def __init__(self, browser, errors, base, panels):
        self.page = new_page(browser, errors, "plotly floor")
        self.page.goto(base + "floor-plotly.html", timeout=BOOT_TIMEOUT_MS)
        self.page.wait_for_function("() => window.setupFloor && window.Plotly")
        self.page.evaluate("panels => setupFloor(panels)", panels)
        settle(self.page)

    def step(self):
        """One timed round of Plotly.react on every panel: {ms, reactMs}."""
        self.page.bring_to_front()
        result = self.page.evaluate("() => floor.step()")
        settle(self.page)
        return result

    def close(self):
        self.page.context.close()


class InPageReplay:
    """The same replay inside the explorer, on its own divs (a diagnostic, not a target): if it
    is slower than the floor page, Plotly itself is slower in the explorer's larger document."""

    def __init__(self, explorer, panels):
        self.page = explorer.page
        # evaluated, not added as a <script>: the explorer's Content-Security-Policy refuses
        # inline scripts (and an evaluation from the automation is not one)
        self.page.evaluate((ASSETS / "plotly_replay.js").read_text(encoding="utf-8"))
        self.page.evaluate("""panels => { window.__benchReplay = new PlotlyReplay(
            panels, panels.map(p => document.getElementById(p.id))); }""", panels)

    def step(self):
        self.page.bring_to_front()
        result = self.page.evaluate("() => window.__benchReplay.step()")
        settle(self.page)
        return result


def replay_panels(captures):
    """Captured react calls of consecutive edits -> one panel per heatmap with its versions."""
    return [{"id": first["id"], "width": first["width"], "versions": [calls[i] for calls in captures]}
            for i, first in enumerate(captures[0])]


def _same_number(text, other):
    try:
        return float(text) == float(other)
    except ValueError:
        return False


def link_to_worked_example():
    """index.html's fragment for the worked example as a link: the page then waits for Python to
    validate it instead of drawing its build-time first view (default-view.json) meanwhile."""
    from pycore.explorer import default_state, encode_fragment
    return "#" + encode_fragment(default_state())


def runtime_floor(host):
    """The page of `host`'s runtime floor: the same runtime booted in a worker, NumPy imported."""
    return "floor-boot.html" if host == "fallback" else "floor-pyscript-worker.html"
