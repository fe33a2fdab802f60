#!/usr/bin/env python3
"""The explorer in Chromium, Firefox and WebKit side by side: boot and edit times per engine
and host, each against Chromium's on the same site (tests/browser/engines/ drives them).

    python benchmarks/engine_bench.py                    # build/test-pyscript, build/test-fallback
    python benchmarks/engine_bench.py --runs 5 --edits 20 --engines chromium,firefox

Per run, every engine boots every host in turn (the engine order rotates run by run, so that
machine noise hits all alike): navigation start to <html data-ready="true">, read in the page
(performance.now(), polled every 10 ms). Each boot reuses the engine's one tab, so the HTTP
cache is warm (every file revalidated: the site sends no-cache) in every engine alike. Once
Python's warm-up and the figures made ahead are over, `--edits` CLS edits: the cell focused and selected, one digit typed
(a real key), and the page's own data-last-render-ms read after the render. Medians over all
runs; the target (the issue's): Firefox and WebKit within 1.5x of Chromium for both.

Beside each site, each engine also boots that host's runtime floor (page_bench.py's: the same
Pyodide and NumPy, with the build's bytecode on the PyScript host, in a worker, and nothing
else), so that the report can say how much of an engine's boot ratio is the runtime's own.
The sites must be built (the tests build them: build/test-<host>, or --site HOST=DIR).
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from page.site import floor_pages, start_server  # noqa: E402
from tests.browser.engines import ENGINES, EngineError, launch  # noqa: E402
from tests.browser.engines.kit import cell, renders, wait_ready, wait_render_after  # noqa: E402

TARGET = 1.5
# Each host's runtime floor among page_bench.py's floor pages (the PyScript one with the
# build's bytecode, as the explorer boots it)
FLOOR_PAGE = {"pyscript": "floor-pyscript-bytecode.html", "fallback": "floor-boot.html"}
READY_AT = """() => { const root = document.documentElement; // null until the page is parsed
    if (!root) return 0;
    const d = root.dataset;
    return d.ready === 'true' ? performance.now() : d.bootFailed === 'true' ? -1 : 0; }"""
WARMED_UP = """() => { const d = document.documentElement.dataset;
    return ['done', 'stopped', undefined].includes(d.warmUp) && ['done', undefined].includes(d.ahead); }"""


def boot(engine, url):
    """ms from navigation start to data-ready."""
    engine.goto("about:blank")
    engine.goto(url, wait="commit")
    at = engine.wait_for(READY_AT, timeout=180, every_ms=10)
    if at < 0:
        wait_ready(engine, timeout=1)  # raises with the page's alert
    return at


def edits(engine, count):
    """The page's lastRenderMs of `count` one-key CLS edits (after Python's warm-up)."""
    engine.wait_for(WARMED_UP, timeout=120, every_ms=50)
    times = []
    for i in range(count):
        engine.evaluate("(s) => { const el = document.querySelector(s); el.focus(); el.select(); }",
                        cell("cls[0,1]"))
        before = renders(engine)
        engine.type_keys("37"[i % 2])
        wait_render_after(engine, before)
        times.append(float(engine.evaluate("() => Number(document.documentElement.dataset.lastRenderMs)")))
        engine.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--site", action="append", default=[], metavar="HOST=DIR")
    args = parser.parse_args(argv)
    folders = {h: os.path.join(ROOT, "build", "test-" + h) for h in ("pyscript", "fallback")}
    folders.update(dict(s.split("=", 1) for s in args.site))
    for host, folder in folders.items():
        if not os.path.exists(os.path.join(folder, "index.html")):
            sys.exit("no built %s site in %s: run the tests once, or build.py --out %s "
                     "--runtime %s" % (host, folder, folder, host))
    # each site with its floor pages beside it (the site's own policy, none on the floors)
    servers, floors = {}, {}
    for host, folder in folders.items():
        pages = floor_pages(Path(folder), host)
        servers[host] = start_server(Path(folder), pages)
        floors[host] = FLOOR_PAGE[host] if "/" + FLOOR_PAGE[host] in pages else None
    names = [n for n in args.engines.split(",") if n]
    playwright = None
    if "chromium" in names:
        from playwright.sync_api import sync_playwright
        playwright = sync_playwright().start()
    engines = {}
    try:
        for name in names:
            try:
                engines[name] = launch(name, playwright)
            except EngineError as e:
                print("%s: not measured: %s" % (name, e), flush=True)
        boots = {(n, h): [] for n in engines for h in folders}
        floor_boots = {(n, h): [] for n in engines for h in folders}
        renders_ms = {(n, h): [] for n in engines for h in folders}
        order = list(engines)
        for run in range(args.runs):
            for host in folders:
                for name in order:
                    key = (name, host)
                    try:
                        boots[key].append(boot(engines[name], servers[host][1] + "index.html"))
                        renders_ms[key] += edits(engines[name], args.edits)
                        if floors[host]:
                            floor_boots[key].append(boot(engines[name], servers[host][1] + floors[host]))
                    except Exception as e:  # noqa: BLE001 (a driver's hiccup: said, and the run goes on)
                        print("run %d %s %s: %s" % (run + 1, name, host, str(e)[:300]), flush=True)
                        continue
                    print("run %d %-8s %-8s boot %7.0f ms  floor %7s  edits median %6.1f ms" % (
                        run + 1, name, host, boots[key][-1],
                        "%.0f ms" % floor_boots[key][-1] if floor_boots[key] else "-",
                        statistics.median(renders_ms[key][-args.edits:])), flush=True)
            order = order[1:] + order[:1]
        report(engines, folders, boots, renders_ms, args)
        report_floors(engines, folders, boots, floor_boots)
    finally:
        for engine in engines.values():
            engine.close()
        if playwright:
            playwright.stop()
        for server, _ in servers.values():
            server.shutdown()
            server.server_close()


def report(engines, folders, boots, renders_ms, args):
    print("\n%d runs, %d edits each; medians; ratio to Chromium on the same site (target <= %.1fx)"
          % (args.runs, args.edits, TARGET))
    print("%-9s %-9s %-9s %10s %7s %10s %7s" % ("engine", "version", "host", "boot ms", "x", "edit ms", "x"))
    for host in folders:
        base = ("chromium", host)
        for name, engine in engines.items():
            b, e = boots[(name, host)], renders_ms[(name, host)]
            if not b:
                print("%-9s %-9s %-9s   did not boot" % (name, engine.version[:9], host))
                continue
            mb, me = statistics.median(b), statistics.median(e)
            rb = rb_s = re_s = ""
            if boots.get(base) and name != "chromium":
                rb = mb / statistics.median(boots[base])
                re_ = me / statistics.median(renders_ms[base])
                rb_s = "%.2f%s" % (rb, "" if rb <= TARGET else "!")
                re_s = "%.2f%s" % (re_, "" if re_ <= TARGET else "!")
            print("%-9s %-9s %-9s %10.0f %7s %10.1f %7s" % (name, engine.version[:9], host, mb, rb_s,
                                                          me, re_s))
    print("(! marks a ratio over the target)")


def report_floors(engines, folders, boots, floor_boots):
    """The runtime floor's boot per engine: its ratio to Chromium's floor is what the engine's
    runtime alone costs; the site over its own floor is what the page adds in that engine."""
    if not any(floor_boots.values()):
        return
    print("\nruntime floors (the same Pyodide and NumPy, nothing else), medians")
    print("%-9s %-9s %10s %7s %12s" % ("engine", "host", "floor ms", "x", "site / floor"))
    for host in folders:
        base = floor_boots.get(("chromium", host))
        for name in engines:
            f, b = floor_boots[(name, host)], boots[(name, host)]
            if not f:
                continue
            mf = statistics.median(f)
            ratio = "%.2f" % (mf / statistics.median(base)) if base and name != "chromium" else ""
            print("%-9s %-9s %10.0f %7s %12s" % (name, host, mf, ratio,
                                                "%.2f" % (statistics.median(b) / mf) if b else "-"))


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print("took %.0f s" % (time.monotonic() - start))
