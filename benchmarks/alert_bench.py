#!/usr/bin/env python3
"""How soon a boot that cannot finish says so (docs/hosts.md, "Failures say so"): for each file
whose loss stops the boot, the seconds from the server's HTTP 404 for it to the page's alert.

    python benchmarks/alert_bench.py                        # build/test-pyscript, Chromium
    python benchmarks/alert_bench.py --site build/test-fallback --chromium /usr/bin/chromium

Each case is a new browser context (a cold boot) whose one missing file is answered 404 by a
route; the clock starts when the route answers and stops at <html data-boot-failed>. Target:
within 2 s, far short of any timeout the page keeps (js/host.js's STALL_MS, 60 s), so an alert
that had waited for one shows here. tests/browser/test_host_failures.py checks what each alert says.

Exit status: 0 when every case met the target, 1 otherwise.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from buildtools.browser import CHROMIUM_FLAGS  # noqa: E402
from buildtools.serve import serve_in_thread  # noqa: E402

TARGET_S = 2.0

# Files whose 404 stops each host's boot (the URL's last part), as test_host_failures.py lists them.
CASES = {
    "pyscript": ["pyodide.asm.wasm.gz", "python_stdlib.zip.gz", "pyscript.json",
                 "pyscript/core.js", "py/explorer.zip", "{wheel}"],
    "fallback": ["numpy.data", "pyodide.asm.wasm", "py/bridge.py"],
}


def wheel_name():
    with open(ROOT / "artifacts.json", encoding="utf-8") as f:
        return json.load(f)["numpy_wheel"]["file_name"]


def seconds_to_alert(browser, base, missing):
    """(seconds from the 404 to the alert, the alert's first words)."""
    context = browser.new_context(bypass_csp=True)
    try:
        page = context.new_page()
        when = []

        def gone(route):
            when.append(time.perf_counter())
            route.fulfill(status=404, body="gone")
        page.route("**/" + missing, gone)
        page.goto(base + "index.html")
        page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                               timeout=120000)
        said = time.perf_counter()
        text = page.evaluate("() => document.getElementById('alert').textContent")
        return said - when[0], text[:60]
    finally:
        context.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--site", type=Path, default=ROOT / "build" / "test-pyscript")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    args = p.parse_args(argv)
    with open(args.site / "build-info.json", encoding="utf-8") as f:
        host = json.load(f)["host"]  # "pyscript" or "fallback"
    from playwright.sync_api import sync_playwright
    server, base = serve_in_thread(str(args.site), policy=None)
    ok = True
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, headless=True,
                                         args=CHROMIUM_FLAGS)
            print("%s (%s host), Chromium; load average %s" % (
                args.site, host, " ".join("%.1f" % v for v in os.getloadavg())))
            print("%-44s %8s  %s" % ("missing file", "seconds", "the alert begins"))
            for missing in CASES[host]:
                missing = missing.format(wheel=wheel_name())
                seconds, text = seconds_to_alert(browser, base, missing)
                met = seconds <= TARGET_S
                ok &= met
                print("%-44s %8.2f  %s%s" % (missing[:44], seconds, text, "" if met else "  OVER"))
            browser.close()
    finally:
        server.shutdown()
    print("target: every alert within %.1f s of its 404" % TARGET_S)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
