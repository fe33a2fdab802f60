#!/usr/bin/env python3
"""The explorer in Chromium, Firefox and WebKit side by side: boot and edit times per engine
and host, each against Chromium's on the same site (tests/browser/engines/ drives them).

    python benchmarks/engine_bench.py                    # build/test-pyscript, build/test-fallback
    python benchmarks/engine_bench.py --runs 5 --edits 20 --engines chromium,firefox

Per run, every engine boots every host in turn (the engine order rotates run by run, so that
machine noise hits all alike): navigation start to <html data-ready="true">, read in the page
(performance.now(), polled every 10 ms). Each boot reuses the engine's one tab, so the HTTP
cache is warm (every file revalidated: the site sends no-cache) in every engine alike. Once
Python's warm-up is over, `--edits` CLS edits: the cell focused and selected, one digit typed
(a real key), and the page's own data-last-render-ms read after the render. Medians over all
runs; the target (the issue's): Firefox and WebKit within 1.5x of Chromium for both.
The sites must be built (the tests build them: build/test-<host>, or --site HOST=DIR).
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from buildtools.serve import serve_in_thread  # noqa: E402
from tests.browser.engines import ENGINES, EngineError, launch  # noqa: E402
from tests.browser.engines.kit import cell, renders, wait_ready, wait_render_after  # noqa: E402

TARGET = 1.5
READY_AT = """() => { const d = document.documentElement.dataset;
    return d.ready === 'true' ? performance.now() : d.bootFailed === 'true' ? -1 : 0; }"""
WARMED_UP = "() => ['done', 'stopped', undefined].includes(document.documentElement.dataset.warmUp)"


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
    servers = {h: serve_in_thread(f) for h, f in folders.items()}
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
        renders_ms = {(n, h): [] for n in engines for h in folders}
        order = list(engines)
        for run in range(args.runs):
            for host in folders:
                for name in order:
                    key = (name, host)
                    try:
                        boots[key].append(boot(engines[name], servers[host][1] + "index.html"))
                        renders_ms[key] += edits(engines[name], args.edits)
                    except EngineError as e:
                        print("run %d %s %s: %s" % (run + 1, name, host, str(e)[:300]), flush=True)
                        continue
                    print("run %d %-8s %-8s boot %7.0f ms  edits median %6.1f ms" % (
                        run + 1, name, host, boots[key][-1],
                        statistics.median(renders_ms[key][-args.edits:])), flush=True)
            order = order[1:] + order[:1]
        report(engines, folders, boots, renders_ms, args)
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


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print("took %.0f s" % (time.monotonic() - start))
