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
6. Scrubbing (page/scrub.py): a number stepped with held keys and dragged with the pointer,
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

The JavaScript that records the timings (page/assets/instrument.js) is installed in every
page before its own scripts run; the floor pages are in page/assets/ too and are served
from memory next to the site, so a --site folder is never modified. The site is served by the
project's own server (buildtools/serve.py), with the Content-Security-Policy its build wrote, as
a visitor gets it; the floors, the benchmark's own pages, carry none.

This file is the command line; the rest, by concept: page/common.py (targets, the edits
timed), page/site.py (sites, floors, serving), page/pages.py (the pages driven),
page/measure.py, page/report.py, page/scrub.py (scrubbing).
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import onefile_bench
from page.common import ASSETS, HOSTS, BenchError  # first: it puts the checkout on sys.path
from buildtools.browser import CHROMIUM_FLAGS
from page.measure import measure
from page.report import machine_facts, print_report
from page.site import build_info, build_site, floor_pages, site_host, start_server


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
