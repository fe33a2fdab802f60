#!/usr/bin/env python3
"""Hostile input in the page (docs/interface.md, "Limits"): how long each bad model file and
each large paste takes to be refused or answered, and how much the renderer grows.

    python benchmarks/hostile_bench.py                      # build/test-pyscript, Chromium
    python benchmarks/hostile_bench.py --site DIR --chromium /usr/bin/chromium

For each case, in one page booted once (the PyScript host, Chromium):
- a file: chosen in the real file chooser (Playwright's set_input_files) and timed from the
  choice to <html data-model-file="refused"> (or "loaded"); every case of
  tests/test_model_file_refusals.py, plus the worst the last audit found (an .npz of 100,000
  members, a safetensors header of 250,000 tensors). Target: refused within 2 s.
- a paste: a real paste event on a cell, timed by the page's clock to the answer drawn (or
  refused), within a frame. Target: 1 s.
- memory: the resident size of the browser's renderer processes (the page and its worker
  live there; the ids come from Chromium's SystemInfo.getProcessInfo, the sizes from /proc),
  after each case against the size after boot, side by side with the floor: the same page
  after an honest ViT-B/16 head file (768 x 1000) was loaded. Target: at most 300 MB more.
- Python's time per request (the worker's own figure, worker_ms), for each case's requests.

Exit status: 0 when every target is met, 1 otherwise.
"""
import argparse
import io
import json
import os
import struct
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from buildtools.browser import CHROMIUM_FLAGS  # noqa: E402
from buildtools.serve import serve_in_thread  # noqa: E402
from model_files import npy_bytes  # noqa: E402
from test_model_file_refusals import CASES  # noqa: E402

FILE_S, PASTE_S, GROWTH_MB = 2.0, 1.0, 300

# Every answer's Python time (worker_ms), kept by the page for this benchmark's reading.
RECORD = """
(() => {
  let host;
  Object.defineProperty(self, "vitHost", { configurable: true, get: () => host, set: (value) => {
    const ready = value.ready;
    value.ready = (bridge) => {
      const call = bridge.call.bind(bridge);
      self.__pythonMs = [];
      bridge.call = (request) => call(request).then((answer) => {
        self.__pythonMs.push([request.op, answer.worker_ms || 0]);
        return answer;
      });
      return ready.call(value, bridge);
    };
    host = value;
  }});
})();
"""


def worst_files():
    """The audit's worst files besides the test cases: {label: (file name, bytes)}."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("W_head.npy", npy_bytes(np.ones((4, 3))))
        for i in range(100000):
            z.writestr("m%d.npy" % i, b"")
    n = 250000
    header = json.dumps({"t%d" % i: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
                         for i in range(n)}).encode()
    return {"an npz of 100,000 members": ("many.npz", out.getvalue()),
            "safetensors of 250,000 tensors": ("many.safetensors",
                                               struct.pack("<Q", len(header)) + header + b"\0" * (4 * n))}


PASTES = {
    "400,000 blank lines, then a row": "\n" * 400000 + "1\t2",
    "1,000,000 blank lines, then a row": "\n" * 1000000 + "1\t2",
    "10 MB block into the 3 x 4 grid": ("1.25\t" * 999 + "1.25\n") * 2000,
    "a million numbers on one line": "\t".join(["0.5"] * 1000000),
}


def renderer_mb(cdp):
    """Resident MB of the browser's renderer processes (where the page and its worker run)."""
    info = cdp.send("SystemInfo.getProcessInfo")["processInfo"]
    total = 0
    for p in info:
        if p["type"] != "renderer":
            continue
        try:
            with open("/proc/%d/status" % p["id"]) as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def choose(page, path):
    """Choose `path` in the page's file chooser; (seconds to the page's verdict, verdict)."""
    page.evaluate("() => { delete document.documentElement.dataset.modelFile; self.__pythonMs = []; }")
    t0 = time.perf_counter()
    page.set_input_files("#model-file", str(path))
    page.wait_for_function("() => ['refused', 'loaded'].includes(document.documentElement.dataset.modelFile)",
                           timeout=120000)
    return time.perf_counter() - t0, page.evaluate("document.documentElement.dataset.modelFile")


def paste(page, text):
    """Paste `text` into cls[0,0] with a real paste event; seconds from the event to the answer
    drawn or said, by the page's clock (the text is handed to the page first, untimed: sending
    10 MB to the browser is the benchmark's cost, not the page's)."""
    page.evaluate("(text) => { self.__pythonMs = []; self.__text = text; "
                  "document.getElementById('alert').hidden = true; }", text)
    renders = page.evaluate("Number(document.documentElement.dataset.renders)")
    page.get_by_label("cls[0,0]", exact=True).evaluate(
        """(el) => {
            const data = new DataTransfer();
            data.setData('text/plain', self.__text);
            self.__t0 = performance.now();
            el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
        }""")
    done = page.wait_for_function(
        "n => (Number(document.documentElement.dataset.renders) > n || "
        "!document.getElementById('alert').hidden) && performance.now() - self.__t0",
        arg=renders, timeout=120000, polling="raf")
    return done.json_value() / 1000.0


def python_max(page):
    ms = page.evaluate("self.__pythonMs")
    return max((m for _, m in ms), default=0.0), len(ms)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--site", type=Path, default=ROOT / "build" / "test-pyscript")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--pastes-only", action="store_true", help="skip the files")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright
    server, base = serve_in_thread(str(args.site), policy=None)
    ok = True
    with tempfile.TemporaryDirectory(prefix="hostile-bench-") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_FLAGS)
        context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
        context.add_init_script(RECORD)
        page = context.new_page()
        cdp = browser.new_browser_cdp_session()
        page.goto(base + "index.html")
        page.wait_for_function("document.documentElement.dataset.ready === 'true'", timeout=180000)
        print("the page: %s, Chromium; load average %s" % (
            args.site, " ".join("%.1f" % v for v in os.getloadavg())))
        # the floor: an honest ViT-B/16 head, the largest file a lecturer brings
        rng = np.random.RandomState(0)
        honest = Path(tmp) / "vit_b16_head.npz"
        np.savez(str(honest), W_head=(rng.standard_normal((768, 1000)) * 0.02).astype(np.float32),
                 cls=rng.standard_normal((64, 768)).astype(np.float32))
        booted = renderer_mb(cdp)
        seconds, verdict = choose(page, honest)
        floor = renderer_mb(cdp) - booted
        print("renderer after boot %.0f MB; the floor, an honest ViT-B/16 head file: %.2f s, %s, "
              "+%.0f MB, Python at most %.0f ms a request" % (booted, seconds, verdict, floor,
                                                              python_max(page)[0]))
        page.click("#reset")
        page.wait_for_function("document.getElementById('heatmap-w').data[0].z.length === 4")
        files = {label: (name, data) for label, (name, data, target, _) in CASES.items() if not target}
        files.update(worst_files())
        if args.pastes_only:
            files = {}
        print("\n%-58s %8s %9s %10s %9s" % ("bad file (chosen in the file chooser)", "seconds",
                                              "verdict", "renderer", "Python"))
        worst = (0.0, 0.0, 0.0)
        for label, (name, data) in sorted(files.items()):
            path = Path(tmp) / name
            path.write_bytes(data)
            seconds, verdict = choose(page, path)
            growth = renderer_mb(cdp) - booted
            ms, n = python_max(page)
            worst = (max(worst[0], seconds), max(worst[1], growth), max(worst[2], ms))
            met = verdict == "refused" and seconds <= FILE_S and growth <= GROWTH_MB
            ok &= met
            print("%-58s %8.2f %9s %+8.0f MB %6.0f ms%s" % (label[:58], seconds, verdict, growth, ms,
                                                          "" if met else "  OVER"))
        print("worst file: %.2f s (target %.1f), renderer %+.0f MB against boot (target %d; the "
              "honest ViT-B/16 file's floor %+.0f MB), Python %.0f ms a request at most"
              % (worst[0], FILE_S, worst[1], GROWTH_MB, floor, worst[2]))
        print("\n%-58s %8s %10s %9s" % ("paste (a real paste event on cls[0,0])", "seconds", "renderer", "Python"))
        for label, text in PASTES.items():
            seconds = paste(page, text)
            growth = renderer_mb(cdp) - booted
            ms, n = python_max(page)
            met = seconds <= PASTE_S and growth <= GROWTH_MB
            ok &= met
            print("%-58s %8.2f %+8.0f MB %6.0f ms%s" % (label, seconds, growth, ms, "" if met else "  OVER"))
        browser.close()
    server.shutdown()
    server.server_close()
    print("\nall targets met" if ok else "\nsome target missed (OVER)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
