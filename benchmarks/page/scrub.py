"""Scrubbing in page_bench.py: a number dragged or stepped continuously, each change's time to
the next frame, against the floor of what any page must do for it (docs/performance.md).

Scenarios (the explorer's own keys and pointer, through Playwright):
- keys: Alt+ArrowUp held on a cell, 30 steps at 30 Hz (the key's auto-repeat: keydowns with
  repeat set, one keyup at the end);
- drag: the focused cell's scrub handle dragged sideways, 40 pointer moves of 2 px at 60 Hz;
each at the worked example's size and at ViT-B/16 size. Each step comes at a random point of its
slot (the same points in every run, see _pace).

Per change drawn, the page's <html data-last-render-ms> (the newest change it drew, from its
event to the end of the redraw) plus the time to the next animation frame. Changes that come
while one is answered and drawn are merged (the page skips to the newest), so fewer changes may
be drawn than made; the last is always drawn, and the screen must end at its exact value
(checked here: the cell's text, and the heatmap's z against NumPy).

The floor (page/assets/floor-scrub.html), run right after each scenario with the same
input at the same cadence: a worker round trip carrying as many bytes as the explorer's answers
did per change, then every cell of the same heatmaps coloured into canvases of the same sizes
(with numbers where the explorer prints them), timed from the event to the next animation frame
the same way. The browser delivers pointer moves with its next frame, so a drag's floor is about
a frame; a held key's is a few milliseconds.

Targets: median edit-to-frame at most 16 ms at the worked example's size and 33 ms at ViT-B/16
size, and at most 1.5x the floor.

Also, at the worked example: switching the mistake and the head compared (the mistakes' and
variants' menus, each choice in turn, and back to none), each switch timed the same way, from
the menu's change to the next frame (target: at most 50 ms each).
"""
import collections
import random
import statistics
import time

import numpy as np

ScrubScenario = collections.namedtuple("ScrubScenario", "key title preset label how target_ms")

SCRUBS = [
    ScrubScenario("s1", "keys on a CLS cell, worked example", None, "cls[0,1]", "keys", 16),
    ScrubScenario("s2", "drag on a W_head cell, worked example", None, "W_head[1,2]", "drag", 16),
    ScrubScenario("s3", "keys on a CLS cell, ViT-B/16 size", "vit-b16", "cls[0,1]", "keys", 33),
    ScrubScenario("s4", "drag on a W_head cell, ViT-B/16 size", "vit-b16", "W_head[1,2]", "drag", 33),
]
RATIO_TARGET = 1.5
SWITCH_TARGET_MS = 50
KEY_STEPS, KEY_HZ = 30, 30
DRAG_MOVES, DRAG_HZ, DRAG_PX = 40, 60, 2

# Records, per render the page counts, its lastRenderMs plus the time to the next frame.
WATCH_JS = """() => {
    const root = document.documentElement;
    const out = window.__scrub = { frames: [] };
    let last = root.dataset.renders;
    out.observer = new MutationObserver(() => {
        if (root.dataset.renders === last) return;
        last = root.dataset.renders;
        const ms = Number(root.dataset.lastRenderMs), at = performance.now();
        requestAnimationFrame(() => out.frames.push(ms + performance.now() - at));
    });
    out.observer.observe(root, { attributes: true, attributeFilter: ["data-renders"] });
    window.__bench.resetTraffic();
}"""

# What the page painted: each heatmap's matrix size, whether it prints numbers, its canvas size.
FIGURES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .filter(el => el.vitBitmap && el.vitBitmap.view && el.offsetParent !== null)
    .map(el => ({ rows: el.vitBitmap.rows, cols: el.vitBitmap.cols,
                  text: Boolean(el.vitHover && el.vitHover.spec.text),
                  width: el.vitBitmap.view.width, height: el.vitBitmap.view.height }))"""


def _pace(hz, n, action):
    """Call action(k) n times, on average at hz, each at a random point of its 1/hz slot (the
    same points in every run). A key's auto-repeat and a hand's moves keep no step with the
    screen's 60 Hz frames; steps at exactly 30 Hz would, and then every step of a run would meet
    the frame cycle at the point where the run happened to start."""
    slots = random.Random(n).random
    start = time.perf_counter()
    for k in range(n):
        wait = start + (k + slots()) / hz - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        action(k)


def _drive(page, how, x=None, y=None):
    """The scrub's input: Alt+ArrowUp held (KEY_STEPS keydowns at KEY_HZ), or the mouse pressed
    at (x, y) and moved right DRAG_MOVES times by DRAG_PX at DRAG_HZ."""
    if how == "keys":
        page.keyboard.down("Alt")
        _pace(KEY_HZ, KEY_STEPS, lambda k: page.keyboard.down("ArrowUp"))
        page.keyboard.up("ArrowUp")
        page.keyboard.up("Alt")
        return
    page.mouse.move(x, y)
    page.mouse.down()
    _pace(DRAG_HZ, DRAG_MOVES, lambda k: page.mouse.move(x + DRAG_PX * (k + 1), y))
    page.mouse.up()


def _scrub(explorer, sc):
    """Do one scrub; returns the value the cell should end at."""
    page = explorer.page
    cell = page.get_by_label(sc.label, exact=True)
    cell.click()
    start = float(cell.input_value())
    if sc.how == "keys":
        _drive(page, "keys")
        return round(start + 0.1 * KEY_STEPS, 6)
    grid = "#grid-w" if sc.label.startswith("W_head") else "#grid-input"
    box = page.locator(grid + " .scrub-handle").bounding_box()
    _drive(page, "drag", box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    return round(start + 0.01 * DRAG_PX * DRAG_MOVES, 6)


def _check_final(explorer, sc, want):
    """The screen ends at the last value: the cell's text, the input heatmap's z, and the logits
    against NumPy from the heatmaps' own inputs."""
    page = explorer.page
    text = page.get_by_label(sc.label, exact=True).input_value()
    if float(text) != want:
        return "the cell shows %s, not %s" % (text, want)
    z = lambda i: np.array(page.evaluate("id => Array.from(document.getElementById(id).data[0].z,"
                                         " r => Array.from(r))", i))
    W, X, logits = z("heatmap-w"), z("heatmap-cls"), z("heatmap-logits")
    r, c = (int(v) for v in sc.label[sc.label.index("[") + 1:-1].split(","))
    shown = (W if sc.label.startswith("W_head") else X)[r, c]
    if shown != want:
        return "the heatmap holds %r at (%d, %d), not %r" % (shown, r, c, want)
    h_hat = (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-6)
    if not np.allclose(h_hat @ W, logits, rtol=1e-9, atol=1e-9):
        return "the logits heatmap is not h_hat @ W_head of the heatmaps shown"
    return None


def bench_scrubs(browser, errors, base, host, runs, new_page, explorer):
    """Every scrub scenario `runs` times on the open `explorer`, each run followed by its floor at
    the same cadence. Returns one result per scenario."""
    results = []
    preset = "worked"
    for sc in SCRUBS:
        want_preset = sc.preset or "worked"
        if want_preset != preset:
            explorer.load_preset(want_preset)
            preset = want_preset
        floor = new_page(browser, errors, "scrub floor")
        floor.goto(base + "floor-scrub.html")
        floor.wait_for_function("() => window.setupScrubFloor")
        page_frames, floor_frames, made, drawn, wrong = [], [], 0, 0, []
        for run in range(runs):
            explorer.page.bring_to_front()
            explorer.page.evaluate(WATCH_JS)
            before = explorer.renders()
            want = _scrub(explorer, sc)
            explorer.page.wait_for_function("() => document.documentElement.dataset.linkPending !== 'true'",
                                            timeout=30000)
            time.sleep(0.3)
            got = explorer.page.evaluate("() => { window.__scrub.observer.disconnect();"
                                         " return { frames: window.__scrub.frames,"
                                         " traffic: window.__bench.traffic }; }")
            made += KEY_STEPS if sc.how == "keys" else DRAG_MOVES
            drawn += explorer.renders() - before
            page_frames += got["frames"]
            problem = _check_final(explorer, sc, want)
            if problem:
                wrong.append(problem)
            if run == 0:
                calls = max(1, got["traffic"]["calls"])
                matrices = explorer.page.evaluate(
                    "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                    ".filter(el => el.vitBitmap).map(el => [el.vitBitmap.rows, el.vitBitmap.cols])")
                per_call = got["traffic"]["matrixBytes"] / calls
                # matrices of the same total size as an answer carried (as rows of the figures')
                carried, total = [], 0
                for rows, cols in sorted(matrices, key=lambda m: m[0] * m[1]):
                    if total + rows * cols * 8 <= per_call + 1:
                        carried.append([rows, cols])
                        total += rows * cols * 8
                floor.evaluate("setup => setupScrubFloor(setup)", {
                    "jsonBytes": int(got["traffic"]["jsonBytes"] / calls), "matrices": carried,
                    "figures": explorer.page.evaluate(FIGURES_JS)})
            floor.bring_to_front()
            floor.evaluate("kind => armScrubFloor(kind)", "keydown" if sc.how == "keys" else "pointermove")
            _drive(floor, sc.how, 200, 200)
            floor.wait_for_timeout(300)
            floor_frames += floor.evaluate("() => scrubFloorDone()")
        floor.context.close()
        results.append({"host": host, "scenario": sc, "page": page_frames, "floor": floor_frames,
                        "made": made, "drawn": drawn, "wrong": wrong})
        print("  %s (%s) %s: page %.1f ms, floor %.1f ms (medians), %d of %d changes drawn"
              % (host, sc.key, sc.title, statistics.median(page_frames), statistics.median(floor_frames),
                 drawn, made), flush=True)
    explorer.load_preset("worked")
    return results


def bench_switches(explorer, runs):
    """Each mistake and each variant chosen in turn from its menu, then none, `runs` times, on
    the worked example; returns {menu id: [ms per switch drawn]}."""
    page = explorer.page
    out = {}
    for menu in ("mistake", "variant"):
        page.locator("#" + menu).scroll_into_view_if_needed()
        values = page.evaluate("id => Array.from(document.getElementById(id).options, o => o.value)", menu)
        times = []
        for _ in range(runs):
            for value in values[1:] + [values[0]]:
                page.evaluate(WATCH_JS)
                before = explorer.renders()
                explorer.arm_render_wait(before)
                page.select_option("#" + menu, value)
                explorer.wait_render_after(before)
                page.wait_for_function("() => window.__scrub.frames.length > 0", timeout=30000)
                times += page.evaluate("() => { window.__scrub.observer.disconnect();"
                                       " return window.__scrub.frames.slice(0, 1); }")
                time.sleep(0.2)
        out[menu] = times
        print("  %s menu: median %.1f ms, longest %.1f ms over %d switches"
              % (menu, statistics.median(times), max(times), len(times)), flush=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    return out


def report_switches(host, switches, verdict):
    """Print the switching lines for one host; returns [(name, ok)]."""
    verdicts = []
    for menu, times in switches.items():
        ok = max(times) <= SWITCH_TARGET_MS
        verdicts.append(("%s %s switch" % (host, menu), ok))
        print("   switching the %-8s menu: median %5.1f ms, longest %5.1f ms over %d (target: each"
              " <= %d ms) %s" % (menu, statistics.median(times), max(times), len(times),
                                 SWITCH_TARGET_MS, verdict(ok)))
    return verdicts


def report_scrubs(host, results, verdict):
    """Print the scrub section for one host; returns [(name, ok)]."""
    print("\n6. %s host: scrubbing (per change drawn: the page's lastRenderMs + the time to the next"
          " frame;\n   floor = a worker round trip with the same bytes + the same cells painted on"
          " canvases, same cadence)" % host)
    verdicts = []
    for res in results:
        sc = res["scenario"]
        page, floor = statistics.median(res["page"]), statistics.median(res["floor"])
        ratio = page / floor if floor else float("inf")
        ratio_ok, abs_ok, exact = ratio <= RATIO_TARGET, page <= sc.target_ms, not res["wrong"]
        verdicts += [("%s (%s) scrub ratio" % (host, sc.key), ratio_ok),
                     ("%s (%s) scrub median" % (host, sc.key), abs_ok),
                     ("%s (%s) scrub ends exact" % (host, sc.key), exact)]
        print("   (%s) %-38s page %5.1f ms (p90 %5.1f), floor %5.1f ms: %.2fx (target <= %.1fx) %s;"
              " median target <= %d ms %s" % (sc.key, sc.title, page, float(np.percentile(res["page"], 90)),
                                              floor, ratio, RATIO_TARGET, verdict(ratio_ok), sc.target_ms,
                                              verdict(abs_ok)))
        print("        %d of %d changes drawn (the rest merged into later ones); ends at the exact"
              " value: %s" % (res["drawn"], res["made"], "yes" if exact else "NO: " + res["wrong"][0]))
    return verdicts
