#!/usr/bin/env python3
"""Page-speed benchmark of the explorer, on built sites in headless Chromium: each runtime host
against its own floors, and the hosts against each other (docs/performance.md).

    python benchmarks/page_bench.py                       # build both hosts into a temp dir
    python benchmarks/page_bench.py --hosts pyscript      # one host
    python benchmarks/page_bench.py --site dist           # measure an already built site
    python benchmarks/page_bench.py --site a --site b     # two built sites, one of each host
    python benchmarks/page_bench.py --runs 11 --boot-runs 7 --trace /tmp/traces

Everything is measured side by side in one run, with one browser, alternating the page and its
floor run by run so that machine noise hits both alike:

1. Navigation to ready: the explorer (navigation start to <html data-ready="true">) against the
   runtime's own floor, a bare page that boots the same vendored runtime the same way and imports
   NumPy (fallback: Pyodide 0.17 in the page; PyScript: a PyWorker with NumPy as a package).
   Every boot gets a fresh browser context, i.e. a cold HTTP cache for both pages. Also shown:
   the explorer opened from a link to the same state, where it draws nothing until Python is
   ready (without a link it draws the build-time first view while Python boots); and, for the
   PyScript host, a floor that runs PyScript on the page's main thread instead of a worker, with
   the long tasks of each (how long the page could not scroll or take a keystroke).
2. Edit to render, as the page itself reports it (<html data-last-render-ms>), for a CLS and a
   W_head edit at the worked example's size and at ViT-B/16 size, against the Plotly floor: a
   page with only Plotly.js that calls Plotly.react on exactly the heatmaps the edit redrew, with
   the explorer's own captured arguments (new arrays each time). Per edit also what crossed
   between the page and Python: requests (one message each way), JSON bytes, matrix bytes.
3. The hosts against each other (when both are measured): a fresh explorer on each, the edits
   at the worked example's size alternating between the two, edit by edit, so that they share
   the machine's noise; their medians, and the part of each edit the hosts do differently
   (edit event to the first Plotly.react: the trip to Python and back).
4. Machine facts and a one-line summary.
5. For a PyScript build with the one file (dist/vit-head-explorer.html): its boot from disk
   against the served site's, and what a cold boot of the served site transfers
   (benchmarks/onefile_bench.py).
6. Scrubbing (page_bench_scrub.py): a number stepped with held keys and dragged with the pointer,
   each change's time to the next frame against a floor of a worker round trip with the same
   bytes plus the same cells painted on canvases.

Diagnostics printed next to the targets, to show where the time goes: the boot milestones of
both pages (when Plotly.js was evaluated, when Python and NumPy were up); per edit, the time in
Python, the JS before the first Plotly.react, the time inside the react calls, the same react
calls replayed inside the explorer itself (Plotly in the page's larger document), and the time
until the next frame (which includes the page's relayout and paint, work that lastRenderMs does
not count). --trace DIR also writes Chromium traces of a boot and an edit.

Targets: PyScript host: boot at most 1.15x its floor, edits at the worked example's size at most
1.15x the Plotly floor and no slower than the fallback host; fallback host: 1.25x; edit medians
at most 100 ms at the worked example's size, 150 ms for both edits at ViT-B/16 size (the W_head
one has no ratio target: the floor does not draw the page's bitmap). A missed target prints
FAIL; the exit status stays 0 unless --strict is given (this is a benchmark, not a test).

The JavaScript that records the timings (page_bench_assets/instrument.js) is installed in every
page before its own scripts run; the floor pages are in page_bench_assets/ too and are served
from memory next to the site, so a --site folder is never modified.
"""
import argparse
import collections
import functools
import gzip
import http.server
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
ASSETS = Path(__file__).resolve().parent / "page_bench_assets"
sys.path.insert(0, str(ROOT))
from buildtools.browser import CHROMIUM_FLAGS  # noqa: E402
import page_bench_scrub as scrub  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onefile_bench  # noqa: E402


# Per host: boot ratio, and edit ratio at the worked example's size (ViT-B/16 edits: 1.25x).
BOOT_RATIO_TARGET = {"pyscript": 1.15, "fallback": 1.25}
EDIT_RATIO_TARGET = {"pyscript": 1.15, "fallback": 1.25}
BIG_EDIT_RATIO_TARGET = 1.25
HOSTS = ("pyscript", "fallback")
BOOT_TIMEOUT_MS = 180_000
RENDER_TIMEOUT_MS = 120_000

# Two valid numbers that an edit alternates between, so that every edit is a change.
EDIT_VALUES = ("0.375", "-1.25")


# One kind of edit: the preset it starts from (None: the page's default, the worked example),
# the cell it changes, the absolute target for its median, and whether it is also held to a
# ratio to the Plotly floor. (d) is not: it redraws W_head as the page's own bitmap, which the
# floor (Plotly alone, replaying the page's calls) does not draw; its ratio is still printed.
Scenario = collections.namedtuple("Scenario", "key title preset label target_ms has_ratio_target")


SCENARIOS = [
    Scenario("a", "CLS edit, worked example", None, "cls[0,1]", 100, True),
    Scenario("b", "W_head edit, worked example", None, "W_head[1,2]", 100, True),
    Scenario("c", "CLS edit, ViT-B/16 size", "vit-b16", "cls[0,1]", 150, True),
    Scenario("d", "W_head edit, ViT-B/16 size", "vit-b16", "W_head[1,2]", 150, False),
]


class BenchError(Exception):
    """Something that stops the benchmark, said in words (no traceback needed)."""


# ---- the site ----------------------------------------------------------------------------------

def build_site(out, host):
    """Build one host into `out` with the project's build.py (the PyScript host needs its NumPy
    wheel: downloaded, cached, or from the folder VIT_HEAD_MIRROR names)."""
    cmd = [sys.executable, str(ROOT / "build.py"), "--runtime", host, "--out", str(out)]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError("the build failed (%s):\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    print("built the %s host in %.1f s: %s" % (host, time.monotonic() - started, last))
    return out


def site_host(site):
    """"pyscript" or "fallback", from the site's build-info.json."""
    host = build_info(site).get("host")
    if host not in ("pyscript", "fallback"):
        raise BenchError("%s is a %r build; this benchmark measures the offline hosts "
                         "(pyscript, fallback)" % (site, host))
    return host


def runtime_index_url(site):
    """Where the explorer's fallback glue loads Pyodide from (its data-index-url), site-relative.

    The floor must boot the very same files; the floor page is written for Pyodide 0.17's
    loadPyodide({indexURL}).
    """
    html = (site / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script[^>]*src="boot/fallback\.js"[^>]*data-index-url="([^"]+)"', html)
    if not m:
        raise BenchError("%s/index.html does not boot the fallback host (boot/fallback.js with "
                         "data-index-url); build it with `python build.py --runtime fallback`" % site)
    index_url = m.group(1) if m.group(1).endswith("/") else m.group(1) + "/"
    if not (site / index_url / "pyodide.js").is_file():
        raise BenchError("%s has no %spyodide.js" % (site, index_url))
    return index_url


def build_info(site):
    try:
        return json.loads((site / "build-info.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# ---- serving -----------------------------------------------------------------------------------

class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types Pyodide and modules need, plus pages served from memory."""

    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map, **{
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".mjs": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".json": "application/json",
        ".wasm": "application/wasm",   # needed for WebAssembly streaming compilation
        ".data": "application/octet-stream",
        ".py": "text/plain; charset=utf-8",
    })
    overlay = {}  # URL path -> text (HTML, JSON, Python); set on a subclass per server

    def send_head(self):
        path = urlsplit(self.path).path
        page = self.overlay.get(path)
        local = self.translate_path(path)
        if page is None and not os.path.exists(local) and os.path.isfile(local + ".gz"):
            # a file the site serves gzipped (buildtools/gzipped.py), which the floors' plain
            # Pyodide asks for by its own name
            with open(local + ".gz", "rb") as f:
                page = gzip.decompress(f.read())
        if page is None:
            return super().send_head()
        body = page if isinstance(page, bytes) else page.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", self.extensions_map.get(os.path.splitext(path)[1], "text/plain"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A context closed mid-download resets its connections; that is expected, not news.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def start_server(site, overlay):
    """Serve `site` (and the `overlay` pages) on 127.0.0.1, a free port, in a daemon thread."""
    handler = type("Handler", (SiteHandler,), {"overlay": overlay})
    server = QuietServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, name="site-server", daemon=True).start()
    return server, "http://127.0.0.1:%d/" % server.server_address[1]


# ---- pages -------------------------------------------------------------------------------------

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


def boot_once(browser, errors, url, name):
    """One cold navigation; returns the page's milestones (ms since navigation start) and its
    long tasks until ready (longest, and total blocking time: the sum of each task's time over
    50 ms)."""
    page = new_page(browser, errors, name)
    try:
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
        # The edits are timed once Python's warm-up (web/js/warmup.js) is over, as for a person
        # who reads the page for a couple of seconds before typing.
        t0 = time.perf_counter()
        self.page.wait_for_function("() => ['done', 'stopped', undefined].includes("
                                    "document.documentElement.dataset.warmUp)", timeout=RENDER_TIMEOUT_MS)
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


# ---- the two benchmarks ------------------------------------------------------------------------

def link_to_worked_example():
    """index.html's fragment for the worked example as a link: the page then waits for Python to
    validate it instead of drawing its build-time first view (default-view.json) meanwhile."""
    from pycore.explorer import default_state, encode_fragment
    return "#" + encode_fragment(default_state())


def runtime_floor(host):
    """The page of `host`'s runtime floor: the same runtime booted in a worker, NumPy imported."""
    return "floor-boot.html" if host == "fallback" else "floor-pyscript-worker.html"


def bench_boot(browser, errors, base, host, runs, bytecode_floor=False):
    """Navigation to ready: the explorer (plain and from a link), its runtime floor and, for the
    PyScript host, the main-thread floor and (`bytecode_floor`) the floor with the build's
    bytecode, in turn (and in alternating order). Returns {name: [marks of each run]}."""
    targets = [("explorer", base + "index.html"), ("floor", base + runtime_floor(host)),
               ("explorer from a link", base + "index.html" + link_to_worked_example())]
    if host == "pyscript":
        targets.append(("main-thread floor", base + "floor-pyscript-main.html"))
        if bytecode_floor:
            targets.append(("bytecode floor", base + "floor-pyscript-bytecode.html"))
    out = {name: [] for name, _ in targets}
    # One untimed boot of each first: it pays for the browser's and the OS's first-time costs.
    for name, url in targets:
        boot_once(browser, errors, url, name)
    for run in range(runs):
        for name, url in (targets if run % 2 == 0 else targets[::-1]):
            out[name].append(boot_once(browser, errors, url, name))
        print("  %s boot run %d/%d: %s" % (host, run + 1, runs, ", ".join(
            "%s %.0f ms" % (name, out[name][-1]["ready"]) for name, _ in targets)), flush=True)
    return out


def bench_edits(browser, errors, base, host, runs, warmups):
    """Edit-to-render for every scenario; each timed edit is followed by one round of its Plotly
    floor and one replay of the same react calls inside the explorer (diagnostic)."""
    results = []
    explorer = Explorer(browser, errors, base)
    print("  Python's warm-up: %s, %.1f s after the page was ready" % explorer.warm_up, flush=True)
    preset = None
    for sc in SCENARIOS:
        if sc.preset != preset:
            ms = explorer.load_preset(sc.preset)
            print("  loaded preset %r in %.0f ms (the page's lastRenderMs)" % (sc.preset, ms), flush=True)
            preset = sc.preset
        explorer.page.bring_to_front()
        for _ in range(warmups):
            explorer.edit(sc.label)
        # Two consecutive edits, captured: the floor alternates between their react arguments.
        first = explorer.edit(sc.label, capture=True)
        order = [r["id"] for r in first["reacts"]]
        captures = [explorer.captured_calls(order)]
        second = explorer.edit(sc.label, capture=True)
        if [r["id"] for r in second["reacts"]] != order:
            raise BenchError("(%s) two edits of %s redrew different heatmaps: %s vs %s"
                             % (sc.key, sc.label, order, [r["id"] for r in second["reacts"]]))
        captures.append(explorer.captured_calls(order))
        panels = replay_panels(captures)
        floor = PlotlyFloor(browser, errors, base, panels)
        replay = InPageReplay(explorer, panels)
        for _ in range(warmups):
            floor.step()
            replay.step()
        page_runs, floor_runs, replay_runs = [], [], []
        for _ in range(runs):
            explorer.page.bring_to_front()
            page_runs.append(explorer.edit(sc.label))
            floor_runs.append(floor.step())
            replay_runs.append(replay.step())
        floor.close()
        results.append({"host": host, "scenario": sc, "redraws": order, "purges": first["purges"],
                        "page": page_runs, "floor": floor_runs, "replay": replay_runs,
                        "shapes": {i: explorer.shape(i) for i in order}})
        print("  %s (%s) %s: page %.0f ms, floor %.0f ms (medians)"
              % (host, sc.key, sc.title, median([r["ms"] for r in page_runs]),
                 median([r["ms"] for r in floor_runs])), flush=True)
    return explorer, results


def trace_examples(browser, errors, base, host, explorer, out_dir):
    """Chromium performance traces (open in chrome://tracing or ui.perfetto.dev) of one cold boot
    of each page and one edit per scenario, taken after the timed runs so they cannot skew them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, url in (("boot-explorer", base + "index.html"), ("boot-floor", base + runtime_floor(host))):
        page = new_page(browser, errors, name)
        browser.start_tracing(page=page, path=str(out_dir / (name + ".json")))
        page.goto(url, wait_until="commit", timeout=BOOT_TIMEOUT_MS)
        wait_ready(page)
        browser.stop_tracing()
        page.context.close()
    if explorer is not None:
        preset = SCENARIOS[-1].preset  # where bench_edits left the explorer
        for sc in reversed(SCENARIOS):
            if sc.preset != preset:
                explorer.load_preset(sc.preset or "worked")
                preset = sc.preset
            browser.start_tracing(page=explorer.page, path=str(out_dir / ("edit-%s.json" % sc.key)))
            explorer.edit(sc.label)
            browser.stop_tracing()
    print("\ntraces written to %s" % out_dir)


# ---- report ------------------------------------------------------------------------------------

def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def verdict(ok):
    return "PASS" if ok else "FAIL"


def fmt(ms):
    return "%7.0f" % ms if ms is not None else "      -"


BOOT_MILESTONES = {
    # (label, explorer's mark, floor's mark)
    "fallback": [
        ("HTML parsed (DOMContentLoaded)", "domContentLoaded", "domContentLoaded"),
        ("Plotly.js evaluated", "plotlyEvaluated", None),
        ("KaTeX evaluated", "katexEvaluated", None),
        ("Pyodide's wasm + data downloaded", "runtimeFiles", "runtimeFiles"),
        ("Python started (loadPyodide resolved)", "status:numpy", "floor:python"),
        ("NumPy loaded and imported", "status:explorer", "floor:numpyImported"),
        ("explorer's Python imported (host ready)", "host:ready", None),
        ("ready", "ready", "ready"),
    ],
    "pyscript": [
        ("HTML parsed (DOMContentLoaded)", "domContentLoaded", "domContentLoaded"),
        ("Plotly.js evaluated", "plotlyEvaluated", None),
        ("Pyodide's wasm downloaded", "runtimeFiles", "runtimeFiles"),
        ("downloads done, Python starting", "status:python", None),
        ("NumPy loading", "status:numpy", None),
        ("NumPy imported: the explorer's Python runs", "status:explorer", "floor:numpyImported"),
        ("explorer's Python imported (host ready)", "host:ready", None),
        ("ready", "ready", "ready"),
    ],
}


def report_boot(host, boots):
    """Print section 1 for one host; returns (ratio, ok)."""
    explorer, floor, linked = boots["explorer"], boots["floor"], boots["explorer from a link"]
    e, f = median([m["ready"] for m in explorer]), median([m["ready"] for m in floor])
    ratio = e / f
    target = BOOT_RATIO_TARGET[host]
    ok = ratio <= target
    what = ("PyScript + Pyodide 314 + NumPy in a PyWorker, nothing else" if host == "pyscript"
            else "Pyodide 0.17 + NumPy only")
    print("\n1. %s host: navigation to ready (%d cold runs each, fresh browser context per run: no"
          " HTTP cache for either page)" % (host, len(explorer)))
    print("   explorer       median %6.0f ms   [min %.0f, max %.0f]"
          % (e, min(m["ready"] for m in explorer), max(m["ready"] for m in explorer)))
    print("   runtime floor  median %6.0f ms   [min %.0f, max %.0f]   (%s)"
          % (f, min(m["ready"] for m in floor), max(m["ready"] for m in floor), what))
    # Each run's explorer and floor boots are neighbours in time; the median of their ratios is
    # less moved by load that drifts over the minutes of the run (printed as a check).
    paired = median([e_["ready"] / f_["ready"] for e_, f_ in zip(explorer, floor)])
    print("   ratio          %.2fx   target <= %.2fx   %s   (median of per-run ratios: %.2fx)"
          % (ratio, target, verdict(ok), paired))
    l_ = median([m["ready"] for m in linked])
    print("   the explorer opened from a link to the same state, which draws nothing before Python"
          " is ready: median %.0f ms, %.2fx the floor" % (l_, l_ / f))
    if "bytecode floor" in boots:
        b = median([m["ready"] for m in boots["bytecode floor"]])
        print("   the runtime floor with the build's bytecode (the standard library's and NumPy's, as"
              " the explorer boots): median %.0f ms;\n   the explorer takes %.2fx that: its own"
              " cost over the same runtime booted the same way" % (b, e / b))
    print("   the page's main thread until ready (median ms): longest task, total blocking time"
          " (the sum of each long task's time over 50 ms)")
    rows = [("explorer", explorer), ("runtime floor", floor)]
    for name in ("main-thread floor", "bytecode floor"):
        if name in boots:
            rows.append((name, boots[name]))
    for name, runs in rows:
        print("     %-20s ready %6.0f   longest task %6.0f   blocking %6.0f" % (
            name, median([m["ready"] for m in runs]), median([m["longestTask"] for m in runs]),
            median([m["blocked"] for m in runs])))
    print("   where the time goes (median ms since navigation start):")
    print("     %-42s %8s %8s" % ("milestone", "explorer", "floor"))
    for label, em, fm in BOOT_MILESTONES[host]:
        ev = median([m.get(em) for m in explorer]) if em else None
        fv = median([m.get(fm) for m in floor]) if fm else None
        print("     %-42s %8s %8s" % (label, fmt(ev).strip() if ev is not None else "-",
                                      fmt(fv).strip() if fv is not None else "-"))
    return ratio, ok


def breakdown(run):
    """Split one page edit: edit event -> first Plotly.react (Python, reading the matrices, grids,
    URL) and first react -> last react resolved (Plotly, with the text panels drawn meanwhile)."""
    reacts = run["reacts"]
    if not reacts or run["inputAt"] is None:
        return {}
    first = min(r["start"] for r in reacts)
    last = max(r["resolved"] or r["returned"] for r in reacts)
    answer = run["answerAt"] - run["inputAt"] if run.get("answerAt") is not None else None
    return {"pre": first - run["inputAt"], "span": last - first, "python": run["pythonMs"],
            "answer": answer, "worker": run.get("workerMs"),
            "react": sum(r["returned"] - r["start"] for r in reacts), "katex": run["katexMs"]}


def ratio_target(res):
    """The edit ratio target of one host's scenario (None: none): the host's at the worked
    example's size."""
    if not res["scenario"].has_ratio_target:
        return None
    return EDIT_RATIO_TARGET[res["host"]] if res["scenario"].preset is None else BIG_EDIT_RATIO_TARGET


def edit_figures(res):
    """Medians of one scenario and its verdicts."""
    sc = res["scenario"]
    page = median([r["ms"] for r in res["page"]])
    floor = median([r["ms"] for r in res["floor"]])
    ratio = page / floor if floor else float("inf")
    target = ratio_target(res)
    return {"page": page, "floor": floor, "ratio": ratio, "ratio_ok": target is None or ratio <= target,
            "abs_ok": page <= sc.target_ms}


def report_edits(host, results, runs, warmups):
    """Print section 2 for one host; returns a list of (name, ok) verdicts."""
    verdicts = []
    print("\n2. %s host: edit to render (%d edits per scenario after %d warm-ups; each edit followed"
          " by one round of its floor)" % (host, runs, warmups))
    print("   page  = <html data-last-render-ms>: edit event to the end of the last redraw, measured"
          " by the page\n   floor = Plotly.react alone, in a page with only Plotly.js, on the heatmaps"
          " the edit redrew,\n           with the page's own captured arguments (new arrays each time)")
    for res in results:
        sc, f = res["scenario"], edit_figures(res)
        if sc.has_ratio_target:
            verdicts.append(("%s (%s) ratio" % (host, sc.key), f["ratio_ok"]))
        verdicts.append(("%s (%s) median" % (host, sc.key), f["abs_ok"]))
        shapes = ", ".join("%s %dx%d" % ((i.replace("heatmap-", ""),) + res["shapes"][i])
                           if res["shapes"][i] else "%s (a chart)" % i
                           for i in res["redraws"])
        print("\n   (%s) %s: edit %s; redraws %s" % (sc.key, sc.title, sc.label, shapes or "nothing"))
        if res["purges"]:
            print("       also purges: %s" % ", ".join(res["purges"]))
        print("       %-14s %8s %8s %8s" % ("", "median", "min", "max"))
        for name, values in (("page", [r["ms"] for r in res["page"]]),
                             ("Plotly floor", [r["ms"] for r in res["floor"]])):
            print("       %-14s %8.1f %8.1f %8.1f ms" % (name, median(values), min(values), max(values)))
        ratio_text = ("ratio %.2fx (target <= %.2fx) %s" % (f["ratio"], ratio_target(res), verdict(f["ratio_ok"]))
                      if sc.has_ratio_target else
                      "ratio %.2fx (no target: the floor does not draw the page's bitmap)" % f["ratio"])
        print("       %s;  median %.0f ms (target <= %d ms) %s"
              % (ratio_text, f["page"], sc.target_ms, verdict(f["abs_ok"])))
        traffic = [r["traffic"] for r in res["page"]]
        print("       per edit, between the page and Python (medians): %s request(s), one message"
              " each way; answers: %.1f kB of JSON + %.1f kB of matrices"
              % (median([x["calls"] for x in traffic]), median([x["jsonBytes"] for x in traffic]) / 1e3,
                 median([x["matrixBytes"] for x in traffic]) / 1e3))
        parts = [breakdown(r) for r in res["page"]]
        m = {k: median([p.get(k) for p in parts])
             for k in ("pre", "span", "python", "answer", "worker", "react", "katex")}
        if m["pre"] is not None:
            print("       where the page's time goes (medians, ms):")
            print("         edit event -> first Plotly.react %7.1f  (the answer was in the page at %.1f;"
                  " requests to answers %.1f, the link's included, of which %.1f answering in the"
                  " worker: Python, reading the matrices)" % (m["pre"], m["answer"], m["python"], m["worker"]))
            print("         first react -> all resolved     %7.1f  (inside the react calls %.1f,"
                  " KaTeX %.1f)" % (m["span"], m["react"], m["katex"]))
            print("         the same react calls: %.1f in the floor page (inside react %.1f);"
                  " %.1f replayed in the explorer (inside react %.1f)"
                  % (f["floor"], median([r["reactMs"] for r in res["floor"]]),
                     median([r["ms"] for r in res["replay"]]),
                     median([r["reactMs"] for r in res["replay"]])))
            print("         to the next frame (incl. the page's relayout and paint, not in lastRenderMs):"
                  " page %.1f, floor %.1f" % (median([r["frameMs"] for r in res["page"]]),
                                               median([r["frameMs"] for r in res["floor"]])))
    return verdicts


def load_average():
    """The 1-minute load average (None where unknown): other work on the machine shows up in
    every figure, so it is printed with them."""
    try:
        return round(os.getloadavg()[0], 1)
    except (OSError, AttributeError):
        return None


def machine_facts(browser):
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    try:
        import importlib.metadata as md
        pw = md.version("playwright")
    except Exception:
        pw = "?"
    return {"nproc": cpus, "chromium": browser.version, "playwright": pw, "load": load_average(),
            "python": platform.python_version(), "machine": "%s %s" % (platform.system(), platform.machine())}


# ---- main --------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--site", type=Path, action="append",
                   help="a built site to measure (its host from its build-info.json; give it "
                   "twice for one site of each host); default: build each of --hosts into a "
                   "temporary folder")
    p.add_argument("--hosts", default=",".join(HOSTS),
                   help="the hosts to build and measure, comma-separated (default: %(default)s)")
    p.add_argument("--runs", type=int, default=7, help="timed edits per scenario (default: 7)")
    p.add_argument("--warmups", type=int, default=2, help="untimed edits first (default: 2)")
    p.add_argument("--boot-runs", type=int, default=5,
                   help="cold boots of each page, after one untimed boot of each (default: 5)")
    p.add_argument("--skip-boot", action="store_true", help="only the edit benchmark")
    p.add_argument("--skip-edits", action="store_true", help="no edit benchmark")
    p.add_argument("--skip-scrub", action="store_true", help="no scrubbing benchmark")
    p.add_argument("--scrub-runs", type=int, default=3, help="scrubs per scenario (default: 3)")
    p.add_argument("--chromium", default="/usr/bin/chromium", help="browser executable (default: %(default)s)")
    p.add_argument("--trace", type=Path, metavar="DIR",
                   help="also write Chromium performance traces of a boot and one edit per scenario")
    p.add_argument("--strict", action="store_true", help="exit with status 1 when a target is missed")
    args = p.parse_args(argv)
    if args.runs < 1 or args.boot_runs < 1 or args.warmups < 0:
        p.error("--runs and --boot-runs must be >= 1, --warmups >= 0")
    args.hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
    if not args.hosts or set(args.hosts) - set(HOSTS):
        p.error("--hosts takes pyscript, fallback or both")
    return args


def plotly_url(site):
    """The Plotly.js the explorer loads (build.py vendors a heatmap-only bundle or the official
    cartesian one): the Plotly floor must call the very same code."""
    html = (site / "index.html").read_text(encoding="utf-8")
    # preloaded by a <link id="plotly-js"> (or, in builds before it, a <script src>)
    m = re.search(r'<(?:link|script)[^>]*(?:href|src)="(vendor/plotly/[^"]+\.js)"', html)
    if not m or not (site / m.group(1)).is_file():
        raise BenchError("%s/index.html loads no vendored Plotly.js" % site)
    return m.group(1)


def floor_pages(site, host):
    """The floor pages, served from memory next to the site (which is never written to)."""
    read = lambda name: (ASSETS / name).read_text(encoding="utf-8")
    pages = {"/floor-plotly.html": read("floor-plotly.html").replace(
        "{{PLOTLY_REPLAY_JS}}", read("plotly_replay.js")).replace("{{PLOTLY_URL}}", plotly_url(site)),
             "/floor-scrub.html": read("floor-scrub.html")}
    if host == "fallback":
        pages["/floor-boot.html"] = read("floor-boot.html").replace("{{INDEX_URL}}",
                                                                   runtime_index_url(site))
        return pages
    # The PyScript floors boot the site's own PyScript and Pyodide the plain way: PyScript's
    # config with the vendored pyodide.mjs as its interpreter and NumPy as a package.
    config = json.loads((site / "pyscript.json").read_text(encoding="utf-8"))
    html = (site / "index.html").read_text(encoding="utf-8")
    core = re.search(r'data-core="([^"]+)"', html)
    py_config = re.search(r"<py-config[^>]*>.*?</py-config>", html, re.S)
    if not core or not config.get("vit", {}).get("numpy"):
        raise BenchError("%s is not a PyScript build with NumPy" % site)
    stdlib = site / config["vit"]["pyodide_index"] / "python_stdlib.zip"
    if not stdlib.exists():
        # the site serves the build's standard library in place of Pyodide's own, which is no
        # longer in it: the plain floors get Pyodide's, as published, from the build's cache
        from buildtools.cache import Cache, default_cache_dir
        from buildtools.manifest import load
        published = Path(tempfile.mkdtemp(prefix="page-bench-pyodide-"))
        Cache(default_cache_dir(), offline=True).copy_unpacked(
            load(str(ROOT / "artifacts.json")).artifact("pyodide"), str(published))
        pages["/" + config["vit"]["pyodide_index"] + "python_stdlib.zip"] = (
            published / "python_stdlib.zip").read_bytes()
    floor_config = {"interpreter": config["vit"]["pyodide_index"] + "pyodide.mjs",
                    "packages": ["numpy"], "packages_cache": "passthrough",
                    "plugins": config.get("plugins", [])}
    def worker_floor(config):
        return (read("floor-pyscript-worker.html")
                .replace("{{CORE_URL}}", core.group(1))
                .replace("{{PY_CONFIG}}", py_config.group(0) if py_config else "")
                .replace("{{CONFIG}}", json.dumps(dict(config, sync_main_only=True))))
    pages["/floor-pyscript-worker.html"] = worker_floor(floor_config)
    pages["/floor-worker.py"] = read("floor-worker.py")
    vit = config["vit"]
    if vit.get("stdlib"):
        # The same floor with the bytecode the build made (buildtools/bytecode.py): its standard
        # library zip, through an interpreter module that hands it to loadPyodide, and NumPy's
        # bytecode unpacked into site-packages as the explorer has them.
        zipped = {url: path for url, path in config["files"].items() if path.endswith("/*")}
        pages["/floor-bytecode.mjs"] = (
            "// The bytecode floor's interpreter (page_bench.py): the site's Pyodide, with the\n"
            "// build's standard library zip.\n"
            "import * as pyodide from './%spyodide.mjs';\n"
            "export const version = pyodide.version;\n"
            "export const loadPyodide = (options) => pyodide.loadPyodide({ ...options,\n"
            "  indexURL: new URL('./%s', import.meta.url).href,\n"
            "  stdLibURL: new URL('./%s', import.meta.url).href });\n"
            % (vit["pyodide_index"], vit["pyodide_index"], vit["stdlib"]))
        pages["/floor-pyscript-bytecode.html"] = worker_floor(
            dict(floor_config, interpreter="floor-bytecode.mjs", files=zipped)).replace(
            "<title>Runtime floor:", "<title>Runtime floor with the build's bytecode:")
    pages["/floor-pyscript-main.html"] = read("floor-pyscript-main.html").replace(
        "{{CORE_URL}}", core.group(1))
    pages["/floor-main.json"] = json.dumps(floor_config)
    return pages


def measure(args, browser, bases, with_bytecode=()):
    """Run what was asked, with one browser, for each host in `bases` ({host: base URL});
    `with_bytecode`: the hosts whose sites have the build's bytecode (a floor with it is booted
    too). Returns (boots, edits, side_by_side, errors, scrubs): boots, edits and scrubs keyed
    by host, side_by_side bench_hosts' results (None unless both hosts are measured)."""
    errors = PageErrors()
    boots, edits, side_by_side, scrubs = {}, {}, None, {}
    explorer = explorer_host = None
    for host, base in bases.items():
        if not args.skip_boot:
            print("\nbooting each %s page 1+%d times..." % (host, args.boot_runs), flush=True)
            boots[host] = bench_boot(browser, errors, base, host, args.boot_runs,
                                     bytecode_floor=host in with_bytecode)
    for host, base in bases.items():
        if not args.skip_edits:
            print("\nediting on the %s host..." % host, flush=True)
            explorer, edits[host] = bench_edits(browser, errors, base, host, args.runs, args.warmups)
            explorer_host = host
    if not args.skip_edits and {"pyscript", "fallback"} <= set(bases):
        print("\nediting on both hosts, edit by edit...", flush=True)
        side_by_side = bench_hosts(browser, errors, bases, args.runs, args.warmups)
    if args.trace:  # the host whose explorer is still open, else the first
        host = explorer_host or next(iter(bases))
        trace_examples(browser, errors, bases[host], host, explorer, args.trace)
    for host, base in bases.items():
        if not args.skip_scrub:
            print("\nscrubbing on the %s host..." % host, flush=True)
            page = Explorer(browser, errors, base)
            scrubs[host] = scrub.bench_scrubs(browser, errors, base, host, args.scrub_runs, new_page, page)
            page.page.context.close()
    return boots, edits, side_by_side, errors, scrubs


def bench_hosts(browser, errors, bases, runs, warmups):
    """Section 3: the worked example's edits on a fresh explorer of each host, alternating edit by
    edit (and which host goes first, run by run). Returns [(scenario, {host: [edit results]})]."""
    explorers = {host: Explorer(browser, errors, bases[host]) for host in ("pyscript", "fallback")}
    results = []
    try:
        for sc in (sc for sc in SCENARIOS if sc.preset is None):
            runs_by = {host: [] for host in explorers}
            for k in range(warmups + runs):
                for host in (list(explorers) if k % 2 == 0 else list(reversed(explorers))):
                    time.sleep(0.1)  # the other page's work after its redraw (its link) is over
                    explorers[host].page.bring_to_front()
                    result = explorers[host].edit(sc.label)
                    if k >= warmups:
                        runs_by[host].append(result)
            results.append((sc, runs_by))
            print("  (%s) %s: PyScript %.0f ms, fallback %.0f ms (medians)"
                  % (sc.key, sc.title, median([r["ms"] for r in runs_by["pyscript"]]),
                     median([r["ms"] for r in runs_by["fallback"]])), flush=True)
    finally:
        for explorer in explorers.values():
            explorer.page.context.close()
    return results


def report_hosts(side_by_side):
    """Print section 3 (bench_hosts' results); returns verdicts (at the worked example's size,
    the PyScript host must be no slower)."""
    if not side_by_side:
        return []
    print("\n3. The hosts side by side: edits alternating between a PyScript and a fallback explorer"
          "\n   (medians, ms; Python's part: edit event -> first Plotly.react, the trip to Python and"
          " back)")
    verdicts = []
    for sc, runs_by in side_by_side:
        page = {h: median([r["ms"] for r in runs]) for h, runs in runs_by.items()}
        pre = {h: median([breakdown(r).get("pre") for r in runs]) for h, runs in runs_by.items()}
        span = {h: median([breakdown(r).get("span") for r in runs]) for h, runs in runs_by.items()}
        ratio = page["pyscript"] / page["fallback"]
        ok = ratio <= 1.0
        verdicts.append(("(%s) PyScript no slower than fallback" % sc.key, ok))
        print("   (%s) %-28s PyScript %5.1f  fallback %5.1f  %.2fx (target <= 1.00x) %s;"
              "  Python's part %.1f vs %.1f (%.2fx), the redraws %.1f vs %.1f"
              % (sc.key, sc.title, page["pyscript"], page["fallback"], ratio, verdict(ok),
                 pre["pyscript"], pre["fallback"], pre["pyscript"] / pre["fallback"],
                 span["pyscript"], span["fallback"]))
    return verdicts


def print_report(args, boots, edits, side_by_side, errors, facts, seconds, one_file=None, scrubs=None):
    """The sections and the summary line; returns the exit status."""
    verdicts, summary = [], []
    for host, boot in boots.items():
        ratio, ok = report_boot(host, boot)
        verdicts.append(("%s boot ratio" % host, ok))
        summary.append("%s boot %.2fx %s" % (host, ratio, verdict(ok)))
    for host, results in edits.items():
        verdicts += report_edits(host, results, args.runs, args.warmups)
        for res in results:
            f = edit_figures(res)
            summary.append("%s (%s) %.0f ms %.2fx %s" % (host, res["scenario"].key, f["page"], f["ratio"],
                                                       verdict(f["ratio_ok"] and f["abs_ok"])))
    hosts = report_hosts(side_by_side)
    verdicts += hosts
    summary += ["%s %s" % (name, verdict(ok)) for name, ok in hosts]
    for host, results in (scrubs or {}).items():
        scrub_verdicts = scrub.report_scrubs(host, results, verdict)
        verdicts += scrub_verdicts
        summary.append("%s scrubbing %d/%d %s" % (host, sum(ok for _, ok in scrub_verdicts), len(scrub_verdicts),
                                                 verdict(all(ok for _, ok in scrub_verdicts))))
    end_load = load_average()
    print("\n4. Machine: %s CPUs (nproc), Chromium %s; load average %s at start, %s at the end;"
          " whole run %.0f s" % (facts["nproc"], facts["chromium"], facts["load"], end_load, seconds))
    if max(facts["load"] or 0, end_load or 0) > facts["nproc"]:
        print("   the machine was busy with other work (load above its %d CPUs): expect noisy figures;"
              " the ratios, measured interleaved, are the steadier ones" % facts["nproc"])
    if errors.items:
        print("   page errors seen (%d), first ones:" % len(errors.items))
        for item in errors.items[:5]:
            print("     " + item[:200])
    if one_file:  # section 5: benchmarks/onefile_bench.py
        found = onefile_bench.report(one_file)
        verdicts += found
        summary += ["%s %s" % (name, verdict(ok)) for name, ok in found]
    met = sum(ok for _, ok in verdicts)
    print("\nSUMMARY: %d of %d targets met; %s" % (met, len(verdicts), "; ".join(summary)))
    return 1 if args.strict and met < len(verdicts) else 0


def run(args, sites):
    """Serve each site ({host: folder}), launch the one browser, measure, report."""
    from playwright.sync_api import sync_playwright

    if not Path(args.chromium).exists():
        raise BenchError("no browser at %s (Debian: apt-get install chromium; or pass --chromium)"
                         % args.chromium)
    started = time.monotonic()
    servers, bases, with_bytecode = [], {}, set()
    for host, site in sites.items():
        pages = floor_pages(site, host)
        if "/floor-pyscript-bytecode.html" in pages:
            with_bytecode.add(host)
        server, bases[host] = start_server(site, pages)
        servers.append(server)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_FLAGS)
            facts = machine_facts(browser)
            print("machine: %(nproc)s CPUs (nproc), Chromium %(chromium)s, Playwright %(playwright)s,"
                  " Python %(python)s, %(machine)s; load average %(load)s at start" % facts)
            for host, site in sites.items():
                rt = build_info(site).get("runtime", {})
                print("site: %s (%s host: Pyodide %s, Python %s, NumPy %s), served at %s"
                      % (site, host, rt.get("pyodide", "?"), rt.get("python", "?"),
                         rt.get("numpy", "?"), bases[host]), flush=True)
            boots, edits, side_by_side, errors, scrubs = measure(args, browser, bases, with_bytecode)
            one_file = None
            if not args.skip_boot and "pyscript" in sites and (
                    sites["pyscript"] / onefile_bench.ONE_FILE).exists():
                print("\nbooting the one file from disk and the served site, side by side...",
                      flush=True)
                one_file = onefile_bench.measure(browser, sites["pyscript"], args.boot_runs,
                                                 ASSETS / "instrument.js")
            browser.close()
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    return print_report(args, boots, edits, side_by_side, errors, facts, time.monotonic() - started,
                        one_file, scrubs)


def main(argv=None):
    args = parse_args(argv)
    try:
        if args.site:
            sites = {}
            for site in (s.resolve() for s in args.site):
                if site_host(site) in sites:
                    raise BenchError("two sites of the %s host: give one per host" % site_host(site))
                sites[site_host(site)] = site
            return run(args, sites)
        with tempfile.TemporaryDirectory(prefix="page-bench-") as tmp:
            sites = {host: build_site(Path(tmp) / host, host) for host in args.hosts}
            return run(args, sites)
    except BenchError as err:
        print("page_bench: %s" % err, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
