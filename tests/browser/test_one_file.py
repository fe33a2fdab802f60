"""The one file (dist/vit-head-explorer.html, buildtools/onefile/page.py): copied alone into an empty
folder and opened from disk (file://) in each engine, and served alone by a plain static server
under a learning platform's policy. What it shows is checked against NumPy written out here.

One boot per engine covers the lot (ready, exact logits from a #state= link, a typed edit, a
paste, an export downloaded and one copied and run as Python, Copy link, the docs opened on the
page and closed again); a damaged and a cut-short copy each boot to their message in Chromium.
Copy writes each engine's real clipboard, read back by a real paste; a download is caught where
the page hands it to the browser (its anchor's click: the file's name and bytes), since the
engines save files to disk each their own way (Chromium's real download: test_page_export.py).
"""
import contextlib
import functools
import http.server
import io
import json
import os
import re
import shutil
import threading
from urllib.parse import unquote

import numpy as np
import pytest

from .engines import ENGINES, EngineError
from .engines.kit import (alerts, cell, edit, heatmap_z, renders, snapshot, state_fragment,
                          wait_ready, wait_render_after, watch)

pytestmark = [pytest.mark.browser]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILE = "vit-head-explorer.html"
RNG = np.random.RandomState(28)
CLS = np.round(RNG.standard_normal((3, 5)), 3)
W = np.round(RNG.standard_normal((5, 4)), 3)
# What a learning platform (Moodle, Canvas, ...) may send with an uploaded file: permissive for
# scripts, but nothing from other sites; the file's own <meta> policy applies on top of it.
PLATFORM_POLICY = ("default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; "
                   "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                   "font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; "
                   "frame-ancestors 'self'; report-uri /__csp-report")


def head(cls, w):
    """LayerNorm without gamma/beta (population variance, eps 1e-6 inside the root), times W."""
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return ((cls - mu) / np.sqrt(var + 1e-6)) @ w


@pytest.fixture(scope="module")
def one_file(sites, tmp_path_factory):
    """The PyScript build's one file, copied alone into an empty folder."""
    sites.url("pyscript")  # builds it
    built = os.path.join(ROOT, "build", "test-pyscript", FILE)
    folder = tmp_path_factory.mktemp("alone")
    shutil.copy(built, folder / FILE)
    assert os.listdir(folder) == [FILE]
    return folder / FILE


# The page's downloads caught where it hands them to the browser: the anchor it clicks, with the
# Blob its URL was made from (read here; not saved to disk).
CATCH_DOWNLOADS = """() => {
    window.__saved = [];
    const blobs = new Map(), make = URL.createObjectURL;
    URL.createObjectURL = (blob) => { const url = make.call(URL, blob); blobs.set(url, blob); return url; };
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
        if (!this.download || !blobs.has(this.href)) return click.call(this);
        const entry = { name: this.download, inDocument: this.isConnected, text: null };
        window.__saved.push(entry);
        blobs.get(this.href).text().then((t) => { entry.text = t; });
    };
}"""


def toast(engine):
    return engine.evaluate("() => document.getElementById('toast').textContent")


def paste_back(engine):
    """What the engine's clipboard holds, pasted (Control+V) into a text area made for it."""
    engine.evaluate("""() => { const a = document.createElement('textarea');
        a.id = '__pasted'; a.style.cssText = 'position:fixed;left:0;top:0;width:6em;height:2em;z-index:2147483647';
        document.body.append(a); a.focus(); }""")
    try:
        engine.press("Control+V")
        engine.wait_for("() => document.getElementById('__pasted').value.length > 0", timeout=10)
        return engine.evaluate("() => document.getElementById('__pasted').value")
    finally:
        engine.evaluate("() => document.getElementById('__pasted').remove()")


def wait_for_alert(engine, timeout=20.0):
    engine.wait_for("() => document.documentElement.dataset.bootFailed === 'true'", timeout=timeout)
    return alerts(engine)


@pytest.mark.parametrize("engine_name", ENGINES)
def test_the_file_alone_from_disk_does_what_the_page_does(engines, engine_name, one_file):
    engine = engines.get(engine_name)
    engine.goto(one_file.as_uri() + state_fragment({"cls": CLS.tolist(), "W_head": W.tolist()}))
    wait_ready(engine)
    assert engine.evaluate("() => location.protocol") == "file:"
    assert engine.evaluate("() => document.documentElement.dataset.pyodide").startswith("314.")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, W), rtol=0, atol=1e-12)

    edit(engine, "cls[0,1]", "4.5", then="Tab")  # typed key by key
    cls = CLS.copy()
    cls[0, 1] = 4.5
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W), atol=1e-12)

    engine.click(cell("W_head[1,2]"))
    before = renders(engine)
    engine.paste("9\t8\n7\t6")
    wait_render_after(engine, before)
    w = W.copy()
    w[1:3, 2:4] = [[9, 8], [7, 6]]
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w), atol=1e-12)

    # an export downloaded: its file as the page hands it to the browser
    engine.evaluate(CATCH_DOWNLOADS)
    engine.click("#export-csv")
    engine.wait_for("() => window.__saved.length === 1 && window.__saved[0].text !== null")
    saved = engine.evaluate("() => window.__saved[0]")
    assert saved["name"] == "logits.csv" and saved["inDocument"]
    rows = [r.split(",") for r in saved["text"].splitlines()[1:]]
    np.testing.assert_allclose(np.array(rows, float)[:, 1:], head(cls, w), rtol=1e-12, atol=1e-12)
    assert toast(engine).startswith("Downloaded logits.csv (")

    # Copy: the engine's real clipboard, read back by a real paste
    engine.click("#export-numpy-copy")
    engine.wait_for("() => document.getElementById('toast').textContent.startsWith('Copied')")
    assert toast(engine).startswith("Copied the NumPy code ("), toast(engine)
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(paste_back(engine), "<exported>", "exec"), namespace)  # noqa: S102
    np.testing.assert_allclose(namespace["logits"], head(cls, w), rtol=1e-12, atol=1e-12)

    # Copy link, the same way
    engine.click("#copy-link")
    engine.wait_for("() => document.getElementById('toast').textContent.startsWith('Link copied')")
    link = paste_back(engine)
    assert link.startswith(one_file.as_uri() + "#state=")
    assert link.endswith(engine.evaluate("() => location.hash"))
    assert json.loads(unquote(link.split("#state=")[1]))["W_head"] == w.tolist()

    docs_open_on_the_page(engine, one_file)
    edit(engine, "cls[2,4]", "-3", then="Tab")  # the explorer goes on after the docs
    cls[2, 4] = -3
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w), atol=1e-12)
    assert engine.evaluate("() => document.documentElement.dataset.ready") == "true"
    assert alerts(engine) == ""
    assert engine.console_errors() == []


def docs_open_on_the_page(engine, one_file):
    """The footer's link to docs/math opens the doc in a dialog on the page, read from the file
    itself (no docs/ folder is beside it); a link in it opens another doc there; Esc closes it,
    the focus is back on the link that opened it, and the address bar still holds the state."""
    address = engine.evaluate("() => location.href")
    engine.click('footer a[href="#doc=math"]')
    engine.wait_for("""() => document.getElementById('doc-dialog').open
                           && !!document.querySelector('#doc-body h1')""")
    text = " ".join(engine.evaluate(
        "() => document.getElementById('doc-body').textContent").split())
    assert text.startswith("The math the page teaches")
    for words in ("ε = 1e-6", "scale γ", "h_hat ≈ [0.633"):
        assert words in text
    assert engine.evaluate("() => document.activeElement.id") == "doc-close"
    engine.click("#doc-all")  # the docs' index, then a doc from it
    engine.wait_for(
        "() => document.querySelector('#doc-body h1').textContent.startsWith('The explorer')")
    engine.click('#doc-body a[href="#doc=tiny-vit"]')
    engine.wait_for(
        "() => document.querySelector('#doc-body h1').textContent.startsWith('The tiny ViT')")
    engine.press("Escape")
    engine.wait_for("() => !document.getElementById('doc-dialog').open")
    assert engine.evaluate("() => document.activeElement.getAttribute('href')") == "#doc=math"
    assert engine.evaluate("() => location.href") == address
    assert address.startswith(one_file.as_uri() + "#state=")


class _Platform(http.server.SimpleHTTPRequestHandler):
    """Serves a folder with PLATFORM_POLICY as a header; records every request and report."""
    requests, reports = [], []

    def end_headers(self):
        self.send_header("Content-Security-Policy", PLATFORM_POLICY)
        super().end_headers()

    def do_GET(self):
        self.requests.append(self.path)
        super().do_GET()

    def do_POST(self):
        self.reports.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_served_alone_under_a_learning_platforms_policy_it_asks_for_nothing_else(engines, one_file):
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Platform, directory=str(one_file.parent)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        engine = engines.get("chromium")
        engine.goto("http://127.0.0.1:%d/%s%s" % (server.server_address[1], FILE, state_fragment(
            {"cls": CLS.tolist(), "W_head": W.tolist()})))
        wait_ready(engine)
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, W), atol=1e-12)
        edit(engine, "W_head[0,0]", "2", then="Tab")
        w = W.copy()
        w[0, 0] = 2
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, w), atol=1e-12)
        watch(engine)  # a failed wait says what the page was doing (kit.snapshot)
        engine.click("#digit .digit-gallery button")  # the tiny ViT, KaTeX-free path
        try:
            engine.wait_for("() => /\\d/.test(document.getElementById('digit-prediction').textContent)")
        except EngineError as e:
            raise EngineError("%s\nthe page then: %s" % (e, json.dumps(snapshot(engine))))
    finally:
        server.shutdown()
        server.server_close()
    assert _Platform.requests == ["/" + FILE]  # no request leaves the file
    assert _Platform.reports == []
    assert alerts(engine) == ""


def test_a_damaged_or_cut_short_file_says_so(engines, one_file, tmp_path):
    engine = engines.get("chromium")
    with open(one_file, encoding="utf-8") as f:
        text = f.read()
    cut = tmp_path / "cut.html"
    cut.write_text(text[:int(len(text) * 0.7)], encoding="utf-8")
    engine.goto(cut.as_uri())
    message = wait_for_alert(engine)
    assert "This file is incomplete" in message and "Download vit-head-explorer.html again" in message

    # one character changed in the middle of NumPy's payload: still base64, no longer its gzip
    start = text.index('id="vit-payload-numpy">') + len('id="vit-payload-numpy">')
    at = start + (text.index("</script>", start) - start) // 2
    damaged = tmp_path / "damaged.html"
    damaged.write_text(text[:at] + ("B" if text[at] != "B" else "C") + text[at + 1:], encoding="utf-8")
    engine.goto(damaged.as_uri())
    message = wait_for_alert(engine)
    assert "This file is damaged: its numpy part could not be decompressed" in message


def one_byte_changed(text, marker):
    """`text` with one character changed in the middle of the inline script that starts with
    `marker` (its hash in the file's policy then no longer matches)."""
    start = text.index(marker)
    at = start + (text.index("</script>", start) - start) // 2
    while not text[at].isalpha():
        at += 1
    return text[:at] + ("x" if text[at] != "x" else "y") + text[at + 1:]


@pytest.mark.parametrize("engine_name", ENGINES)
def test_a_copy_with_a_changed_script_says_it_is_damaged(engines, engine_name, one_file, tmp_path):
    """One byte changed in the page's module script or the boot glue: the browser refuses the
    script (its hash), and the page said nothing for 90 s. Now the alert says so at once; and a
    changed first script (js/host.js, which would say it) leaves a notice that CSS shows."""
    engine = engines.get(engine_name)
    with open(one_file, encoding="utf-8") as f:
        text = f.read()
    for name, marker, says in (
            ("module", '<script type="module">', "one of its scripts was changed"),
            ("glue", "<script>// Boot glue of the one-file page", "one of its scripts was changed"),
            # no hash covers the worker's script (it runs from a blob:): its checksum, in the glue
            ("worker", '<script type="text/plain" id="vit-worker-source">',
             "the script Python runs in was changed")):
        damaged = tmp_path / ("%s.html" % name)
        damaged.write_text(one_byte_changed(text, marker), encoding="utf-8")
        engine.goto(damaged.as_uri())
        message = wait_for_alert(engine, timeout=10.0)
        assert "This file is damaged: " + says in message, (name, message)
        assert "Download vit-head-explorer.html again" in message
    damaged = tmp_path / "host.html"
    damaged.write_text(one_byte_changed(text, "<script>// The one meeting point between"),
                       encoding="utf-8")
    engine.goto(damaged.as_uri())
    engine.wait_for("""() => { const p = document.querySelector('.boot-stalled');
        return p && getComputedStyle(p).visibility === 'visible'; }""", timeout=15.0)
    assert "may be damaged: download vit-head-explorer.html again" in engine.evaluate(
        "() => document.querySelector('.boot-stalled').textContent.replace(/\\s+/g, ' ')")


def test_the_served_page_offers_the_file_with_its_size(one_file):
    """"Download for offline use" on the served page: a link to the file, with its size."""
    with open(os.path.join(ROOT, "build", "test-pyscript", "index.html"), encoding="utf-8") as f:
        html = f.read()
    link = re.search(r'<a id="offline-file" href="([^"]+)" download>Download for offline use</a>'
                     r' \(one file, ([\d.]+) MB\)', html)
    assert link and link.group(1) == FILE
    assert float(link.group(2)) == round(os.path.getsize(one_file) / 1e6, 1)
    assert os.path.getsize(one_file) <= 15e6
