#!/usr/bin/env python3
"""What the model's own head and the head at every depth cost a typed edit and a stroke in the
page itself (headless Chromium, a built PyScript site), side by side with the page without them,
in one run (docs/performance.md, "The model's own head and the lens"; lens_bench.py: CPython).

    python benchmarks/lens_page_bench.py [--site dist] [--edits 15] [--drawings 20]

1. A ViT-B/16 model file (lens_bench.vit_b16_file: W_head 768 x 1000, 64 CLS vectors, gamma/beta,
   bias, hidden_cls of 13 depths) chosen in the file chooser of three pages kept open (a browser
   context each): (a) the model's own head and its lens (the file with hidden_cls), (b) the
   model's own head (the file without), (c) the problem's head ("Head in the pipeline" switched
   to the page's). Edit by edit, the three in turn (the order rotating): click cls[0,0], type a
   number key by key (each key's render awaited), Enter. Each key's data-last-render-ms (and
   of it Python's time in the worker), (a)/(c), (b)/(c), and the page's budget for a CLS edit
   at ViT-B/16 size (page/common.py, scenario "c": median <= 150 ms).
2. The tiny ViT's drawing panel (#digit, its lens #heatmap-lens), after Clear (the pipeline
   then follows the pen): handwriting.py's digits drawn with the mouse, 60 moves a second. The
   readings while the pen is down (data-preview-ms), the pipeline's renders while it is down
   (data-last-render-ms, and to the next frame: the measure docs/performance.md recorded before
   the lens) and each lift's render, against drawing_page_bench.py's budgets. The page has no
   switch that leaves the tiny ViT's lens out: the same drawings, interleaved, are drawn on a
   second site built from this checkout with one line changed (sections.py's lens section hides
   its heatmap for a drawn digit); --with-lens-only leaves that site out.

Milliseconds are the page's own (performance.now()); on a shared machine trust the ratios
(measured interleaved) more than the milliseconds.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from page.common import ROOT, SCENARIOS, BenchError  # first: it puts the checkout on sys.path
from buildtools.browser import CHROMIUM_FLAGS
from lens_bench import vit_b16_file
from page.pages import Explorer, PageErrors, settle
from page.site import build_info, build_site, site_host, start_server
from tests.browser import handwriting
from drawing_page_bench import LIFT_MS, READING_MS as READING_BUDGET_MS

EDIT_BUDGET_MS = next(s.target_ms for s in SCENARIOS if s.key == "c")  # CLS edit, ViT-B/16 size
# docs/performance.md, "A drawing in progress", before the lens: per pipeline redraw during a
# stroke (3 strokes of 24 moves, 60 a second), from the change to the next frame
BEFORE_LENS = "median 17.7-19.2 ms, longest 25-32 ms"
VARIANTS = (("a", "own head + lens (hidden_cls)", True, "model"),
            ("b", "own head, no hidden_cls", False, "model"),
            ("c", "the problem's head", False, "page"))
DRAW_HZ = 60
LAST_MS = "() => document.documentElement.dataset.lastRenderMs"
RESET = "() => { const b = window.__bench; b.pythonMs = 0; b.workerMs = 0; b.resetTraffic(); }"
SPENT = """() => { const b = window.__bench, t = b.traffic;
                   return [b.workerMs, b.pythonMs, (t.jsonBytes + t.matrixBytes) / 1e6]; }"""
OBSERVE = """() => {
  const root = document.documentElement, panel = document.getElementById('digit');
  const b = window.__lens = { readings: [], renders: [], down: false, liftAt: 0 };
  new MutationObserver(() => b.readings.push(Number(panel.dataset.previewMs)))
    .observe(panel, { attributes: true, attributeFilter: ['data-previews'] });
  new MutationObserver(() => {
    const at = performance.now(), rec = { ms: Number(root.dataset.lastRenderMs), down: b.down, at };
    b.renders.push(rec);
    window.__bench.afterNextFrame((t) => { rec.frame = t - (at - rec.ms); });
  }).observe(root, { attributes: true, attributeFilter: ['data-renders'] });
  addEventListener('pointerdown', () => { b.down = true; }, true);
  addEventListener('pointerup', () => { b.down = false; b.liftAt = performance.now(); }, true);
}"""


def line(label, values):
    if not values:
        return "  %-44s (none)" % label
    p90 = sorted(values)[min(len(values) - 1, int(0.9 * len(values)))]
    return "  %-44s median %6.1f ms, p90 %6.1f, max %6.1f  (n = %d)" % (
        label, statistics.median(values), p90, max(values), len(values))


def verdict(ok):
    return "PASS" if ok else "FAIL"


def model_page(browser, errors, base, path, head):
    ex = Explorer(browser, errors, base)
    page = ex.page
    page.set_input_files("#model-file", str(path))
    page.wait_for_function("() => ['loaded', 'refused'].includes(document.documentElement"
                           ".dataset.modelFile)", timeout=120000)
    if page.evaluate("() => document.documentElement.dataset.modelFile") != "loaded":
        raise BenchError("the page refused %s: %s" % (path.name, page.inner_text("#alert")))
    if head == "page":  # "Head in the pipeline": the problem's
        n = ex.renders()
        ex.arm_render_wait(n)
        page.select_option("#head-shown", "page")
        ex.wait_render_after(n)
    return ex


def typed_edit(ex, text):
    """Click cls[0,0], type `text` key by key, Enter. Returns per key [data-last-render-ms, ms
    in the worker, ms from the request to its answer, the answer's MB], and Enter's renders."""
    page = ex.page
    page.bring_to_front()
    page.get_by_label("cls[0,0]", exact=True).click()
    page.keyboard.press("Control+A")
    times = []
    for key in text:
        n = ex.renders()
        page.evaluate(RESET)
        ex.arm_render_wait(n)
        page.keyboard.press(key)
        ex.wait_render_after(n)
        times.append([float(page.evaluate(LAST_MS))] + page.evaluate(SPENT))
        settle(page)
    n = ex.renders()
    page.evaluate("() => { window.__bench.answerAt = null; window.__bench.resetTraffic(); }")
    page.keyboard.press("Enter")  # the entry is committed: one more request, its answer awaited
    page.wait_for_function("() => !window.__bench.traffic.calls || window.__bench.answerAt !== null")
    settle(page)
    return times, ex.renders() - n


def edits(browser, errors, base, tmp, runs, warmups):
    pages = {}
    for key, title, depths, head in VARIANTS:
        path = tmp / ("vit-b16%s.npz" % ("-hidden" if depths else ""))
        if not path.exists():
            path.write_bytes(vit_b16_file(depths))
        pages[key] = model_page(browser, errors, base, path, head)
    times, enter, keys = {key: [] for key in pages}, {key: 0 for key in pages}, list(pages)
    for k in range(warmups + runs):
        for key in keys[k % 3:] + keys[:k % 3]:
            got, after_enter = typed_edit(pages[key], str(20 + k))  # each key a new value
            if k >= warmups:
                times[key] += got
                enter[key] += after_enter
    for ex in pages.values():
        ex.page.context.close()
    print("\n1. Typed edits of cls[0,0], ViT-B/16 model file (64 x 768, 1000 classes): %d edits of 2"
          " keys + Enter per page, interleaved; each key's data-last-render-ms:" % runs)
    for key, title, _, _ in VARIANTS:
        print(line("(%s) %s" % (key, title), [t[0] for t in times[key]])
              + "; Enter: %d renders" % enter[key])
        print("      medians: Python in the worker %.1f ms, request to answer %.1f ms; answer %.2f MB"
              % tuple(statistics.median(t[i] for t in times[key]) for i in (1, 2, 3)))
    med = {key: statistics.median(t[0] for t in ts) for key, ts in times.items()}
    print("  ratios of the medians: (a)/(c) %.2f, (b)/(c) %.2f, (a)/(b) %.2f"
          % (med["a"] / med["c"], med["b"] / med["c"], med["a"] / med["b"]))
    print("  budget, a CLS edit at ViT-B/16 size, median <= %d ms: " % EDIT_BUDGET_MS + ", ".join(
        "(%s) %s" % (key, verdict(med[key] <= EDIT_BUDGET_MS)) for key in keys))


def site_without_lens(out):
    """This checkout built with one line changed: no lens for a drawn digit (its heatmap hidden,
    as for a state without depths)."""
    src = out.parent / "src-without-lens"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".*", "dist", "build", "tests", "training", "benchmarks", "*.egg-info", "__pycache__"))
    sections = src / "pycore" / "explorer" / "sections.py"
    text, old = sections.read_text(encoding="utf-8"), "shown = panels.lens_heatmap(ctx.state, ctx.trace)"
    if old not in text:
        raise BenchError("pycore/explorer/panels/sections.py no longer reads " + old)
    sections.write_text(text.replace(old, "shown = None if digits.drawn(ctx.state) else "
                                     "panels.lens_heatmap(ctx.state, ctx.trace)"), encoding="utf-8")
    proc = subprocess.run([sys.executable, "build.py", "--runtime", "pyscript", "--out", str(out)],
                          cwd=src, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError("the build without the lens failed:\n" + proc.stdout + proc.stderr)
    return out


def settled(page):
    page.wait_for_function("() => document.getElementById('digit').dataset.drawing === 'done'"
                           " && document.documentElement.dataset.linkPending !== 'true'", timeout=60000)


def drawing_page(browser, errors, base):
    page = Explorer(browser, errors, base).page
    page.click("#digit-clear")  # the pipeline shows the tiny ViT: it follows the pen from now on
    settled(page)
    page.locator("#digit-pad").scroll_into_view_if_needed()
    settle(page)
    page.evaluate(OBSERVE)
    return page


def draw(page, strokes, steps=3):
    """Clear, then draw each stroke: press, `steps` moves between two points at DRAW_HZ, lift,
    wait for the pipeline. Returns each lift's render's data-last-render-ms."""
    page.bring_to_front()
    page.click("#digit-clear")
    settled(page)
    box, lifts = page.locator("#digit-pad").bounding_box(), []
    at = lambda p: (box["x"] + p[1] * box["width"] / 8, box["y"] + p[0] * box["width"] / 8)  # noqa: E731
    for stroke in strokes:
        page.mouse.move(*at(stroke[0]))
        page.mouse.down()
        due = time.perf_counter()
        for a, b in zip(stroke, stroke[1:]):
            for s in range(1, steps + 1):
                due += 1.0 / DRAW_HZ
                time.sleep(max(0.0, due - time.perf_counter()))
                page.mouse.move(*at([u + (v - u) * s / steps for u, v in zip(a, b)]))
        page.mouse.up()
        settled(page)
        settle(page)
        after = page.evaluate("() => window.__lens.renders.filter((r) => r.at > window.__lens.liftAt)")
        lifts += [after[-1]["ms"]] if after else []
    return lifts


def drawings(browser, errors, bases, count):
    pages = {name: drawing_page(browser, errors, base) for name, base in bases.items()}
    lifts, names, drawn = {name: [] for name in pages}, list(pages), 0
    for digit in range(10):
        for strokes in handwriting.drawings(digit, (count + 9 - digit) // 10, seed=45):
            for name in names[drawn % len(names):] + names[:drawn % len(names)]:
                lifts[name] += draw(pages[name], strokes)
            drawn += 1
    print("\n2. The tiny ViT's drawing panel: %d digits drawn with the mouse (%d strokes, %d moves a"
          " second), the pipeline following the pen; %s, interleaved:" % (
              drawn, len(lifts[names[0]]), DRAW_HZ, " and ".join(names)))
    med = {}
    for name, page in pages.items():
        got = page.evaluate("() => window.__lens")
        page.context.close()
        during = [r for r in got["renders"] if r["down"]]
        values = (got["readings"], [r["ms"] for r in during],
                  [r["frame"] for r in during if "frame" in r], lifts[name])
        print(" %s:" % name)
        for label, v in zip(("readings while the pen is down (preview-ms)", "pipeline renders while"
                             " it is down", "  the same, change to the next frame",
                             "pen lift to the pipeline drawn"), values):
            print(line(label, v))
        med[name] = [statistics.median(v) if v else float("nan") for v in values]
        print("  budgets (drawing_page_bench.py): readings' median < %d ms %s; every lift < %d ms %s"
              % (READING_BUDGET_MS, verdict(med[name][0] < READING_BUDGET_MS), LIFT_MS,
                 verdict(lifts[name] and max(lifts[name]) < LIFT_MS)))
    if len(med) == 2:
        print("  with / without the lens, medians: readings %.2f, renders %.2f, to the next frame "
              "%.2f, lift %.2f" % tuple(a / b for a, b in zip(*med.values())))
    print("  before the lens docs/performance.md recorded, change to the next frame: " + BEFORE_LENS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--site", type=Path, help="a built PyScript site (default: build one)")
    p.add_argument("--edits", type=int, default=15, help="timed edits per variant (default: 15)")
    p.add_argument("--drawings", type=int, default=20, help="digits drawn (default: 20)")
    p.add_argument("--with-lens-only", action="store_true", help="no site without the lens")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright
    try:
        with tempfile.TemporaryDirectory(prefix="lens-page-bench-") as tmp, sync_playwright() as pw:
            site = args.site.resolve() if args.site else build_site(Path(tmp) / "site", "pyscript")
            if site_host(site) != "pyscript":
                raise BenchError("%s is not a PyScript build" % site)
            sites = {"with the lens": site}
            if not args.with_lens_only:
                sites["without it"] = site_without_lens(Path(tmp) / "without-lens")
            served = {name: start_server(folder, {}) for name, folder in sites.items()}
            browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_FLAGS)
            rt, errors = build_info(site).get("runtime", {}), PageErrors()
            print("%s: %d CPUs, load average %.1f at start; Chromium %s; %s (Pyodide"
                  " %s, NumPy %s)" % (time.strftime("%Y-%m-%d %H:%M"), os.cpu_count(), os.getloadavg()[0],
                                      browser.version, site, rt.get("pyodide"), rt.get("numpy")), flush=True)
            try:
                edits(browser, errors, served["with the lens"][1], Path(tmp), args.edits, 2)
                drawings(browser, errors, {name: b for name, (_, b) in served.items()}, args.drawings)
            finally:
                browser.close()
                for server, _ in served.values():
                    server.shutdown()
                    server.server_close()
            print("\nload average %.1f at the end" % os.getloadavg()[0]
                  + "".join("\npage error: " + e for e in errors.items))
    except BenchError as err:
        print("lens_page_bench: %s" % err, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
