"""The one file against the served site (docs/performance.md, "The one file"): run by
benchmarks/page_bench.py for a PyScript build that has dist/vit-head-explorer.html, or alone:

    python benchmarks/onefile_bench.py --site dist [--runs 5]

1. Navigation to ready, side by side in one browser, alternating run by run, each in a fresh
   browser context: the served site (index.html from the project's static server,
   buildtools/serve.py, on 127.0.0.1 with the site's Content-Security-Policy, no HTTP
   compression, cold cache) and the one file opened from disk (file://, a copy alone in an empty
   folder). Target: the file's median at most 1.25x the site's.
2. What a cold boot of the served site transfers from that server (every request the page and
   its worker make until ready, and 3 s more for what loads after: Plotly.js, KaTeX), by file.
   Target: at most 15 MB.
"""
import argparse
import functools
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from buildtools import serve as site_server  # noqa: E402

ONE_FILE = "vit-head-explorer.html"
RATIO_TARGET = 1.25
TRANSFER_TARGET = 15e6


class CountingHandler(site_server.SiteHandler):
    """The project's static server (its MIME types, the site's policy; no compression), counting
    what it sends, by path."""
    sent = None  # {path: bytes}; set on a subclass per server
    quiet = True

    def copyfile(self, source, outputfile):
        start = source.tell()
        super().copyfile(source, outputfile)
        path = self.path.split("?")[0]
        self.sent[path] = self.sent.get(path, 0) + source.tell() - start


def serve(site):
    sent = {}
    handler = type("Counting", (CountingHandler,), {"sent": sent})
    server = site_server.SiteServer(("127.0.0.1", 0),
                                    functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d/" % server.server_address[1], sent


def boot(browser, url, instrument, timeout_ms=180_000):
    """One cold navigation to ready in a fresh context; the ready mark (ms since navigation)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(path=str(instrument))
    try:
        page = context.new_page()
        page.goto(url, wait_until="commit", timeout=timeout_ms)
        page.wait_for_function("() => window.__bench && (window.__bench.marks.ready !== undefined"
                               " || window.__bench.marks.bootFailed !== undefined)",
                               timeout=timeout_ms)
        marks = page.evaluate("() => window.__bench.marks")
        if "ready" not in marks:
            alert = page.evaluate("() => (document.getElementById('alert') || {}).textContent")
            raise RuntimeError("%s did not start: %s" % (url, alert))
        return marks["ready"]
    finally:
        context.close()


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def measure(browser, site, runs, instrument):
    """Section 1 and 2's figures: {"served": [ms], "file": [ms], "transfer": {path: bytes},
    "file_bytes"}."""
    site = Path(site)
    folder = Path(tempfile.mkdtemp(prefix="one-file-alone-"))
    server = None
    try:
        shutil.copy(site / ONE_FILE, folder / ONE_FILE)
        file_url = (folder / ONE_FILE).as_uri()
        server, base, sent = serve(site)
        served_url = base + "index.html"
        # the cold served boot's transfer, counted by the server (page and worker alike)
        context = browser.new_context()
        page = context.new_page()
        page.goto(served_url)
        page.wait_for_function("() => document.documentElement.dataset.ready === 'true'",
                               timeout=180_000)
        time.sleep(3)
        transfer = dict(sent)
        context.close()
        boot(browser, file_url, instrument)  # untimed: first-time costs
        times = {"served": [], "file": []}
        for run in range(runs):
            order = [("served", served_url), ("file", file_url)]
            for name, url in (order if run % 2 == 0 else order[::-1]):
                times[name].append(boot(browser, url, instrument))
            print("  one file run %d/%d: served %.0f ms, from disk %.0f ms"
                  % (run + 1, runs, times["served"][-1], times["file"][-1]), flush=True)
        return dict(times, transfer=transfer, file_bytes=(site / ONE_FILE).stat().st_size)
    finally:
        if server:
            server.shutdown()
            server.server_close()
        shutil.rmtree(folder, ignore_errors=True)


def report(res):
    """Print both sections; returns [(target name, ok)]."""
    s, f = median(res["served"]), median(res["file"])
    ratio = f / s
    total = sum(res["transfer"].values())
    print("\n5. The one file (%s, %.1f MB) from disk against the served site (%d cold runs each,"
          " alternating)" % (ONE_FILE, res["file_bytes"] / 1e6, len(res["served"])))
    print("   served site  median %6.0f ms   [min %.0f, max %.0f]"
          % (s, min(res["served"]), max(res["served"])))
    print("   one file     median %6.0f ms   [min %.0f, max %.0f]"
          % (f, min(res["file"]), max(res["file"])))
    print("   ratio        %.2fx   target <= %.2fx   %s" % (ratio, RATIO_TARGET,
                                                          "ok" if ratio <= RATIO_TARGET else "FAIL"))
    print("   a cold boot of the served site transfers %.1f MB in %d requests (target <= %.0f MB"
          " %s); the largest:" % (total / 1e6, len(res["transfer"]), TRANSFER_TARGET / 1e6,
                                  "ok" if total <= TRANSFER_TARGET else "FAIL"))
    for path, size in sorted(res["transfer"].items(), key=lambda kv: -kv[1])[:6]:
        print("     %6.2f MB  %s" % (size / 1e6, path))
    return [("one file boot ratio", ratio <= RATIO_TARGET),
            ("served cold boot transfer", total <= TRANSFER_TARGET)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--site", type=Path, default=Path("dist"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--chromium", default="/usr/bin/chromium")
    args = p.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    from buildtools.browser import CHROMIUM_FLAGS
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_FLAGS)
        res = measure(browser, args.site, args.runs,
                      Path(__file__).resolve().parent / "page" / "assets" / "instrument.js")
        browser.close()
    report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
