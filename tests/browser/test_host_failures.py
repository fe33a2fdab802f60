"""A host that cannot boot says why, in plain words, from the failure's own event.

A PyScript build whose NumPy is deliberately missing says so before it downloads the runtime; a
missing runtime, NumPy or explorer file (an HTTP 404), a NumPy wheel whose bytes are not the
pinned ones, or a .wasm whose 404 comes after Python began starting each end in role="alert"
naming the file and what to do; and with Python's worker missing the page still shows the worked
example, read-only. Each case boots a page of its own (the failure is the boot).
"""
import os
import re
import time

import numpy as np
import pytest

from reference import reference_head

from .conftest import ROOT
from .hostkit import CLS, W_HEAD, WHEEL, boot
from .pagekit import heatmap_z

pytestmark = [pytest.mark.browser]

NO_NUMPY = ("This build has no NumPy for Pyodide 314: rebuild with --numpy-wheel or use the "
            "fallback host")


def test_pyscript_build_without_numpy_says_so_at_once(sites, page, page_log):
    """A PyScript build made without the NumPy wheel cannot compute: the page says why before it
    downloads any of the runtime (about 15 MB that could not be used)."""
    url = sites.url("pyscript-without-numpy")
    boot(page, url)
    page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                           timeout=120000)
    alert = page.get_by_role("alert")
    assert alert.is_visible()
    assert alert.inner_text().strip() == NO_NUMPY
    assert page.evaluate("document.documentElement.dataset.ready") != "true"
    assert not [u for u in page_log.requests if "/vendor/pyodide/" in u]
    page_log.assert_clean(url)

def fail_with(status, body=b"gone"):
    """A route handler that answers with an HTTP error."""
    def handler(route):
        route.fulfill(status=status, body=body)
    return handler

@pytest.mark.parametrize("variant, missing, words", [
    ("fallback", "numpy.data", "NumPy could not be loaded"),
    ("fallback", "pyodide.asm.wasm", "The Python runtime could not be downloaded"),
    ("fallback", "py/bridge.py", "The explorer's Python code could not be loaded"),
    # served gzipped (buildtools/assembly/gzipped.py): the file asked for is <name>.gz
    ("pyscript", "pyodide.asm.wasm.gz", "The Python runtime could not be downloaded"),
    ("pyscript", "python_stdlib.zip.gz", "The Python runtime could not be downloaded"),
    ("pyscript", "numpy-2.4.3.zip", "NumPy's compiled Python (its bytecode) could not be loaded"),
    ("pyscript", "pyscript.json", "The Python runtime could not be downloaded"),
    ("pyscript", "pyscript/core.js", "PyScript could not be loaded"),
    ("pyscript", WHEEL, "NumPy could not be loaded"),
    # the explorer's Python, as one zip (buildtools/assembly/hosts.py's python_zip)
    ("pyscript", "py/explorer.zip", "The explorer's Python code could not be loaded"),
    ("pyscript", "plotly-heatmap.min.js", "Plotly.js, which draws the heatmaps, could not be loaded"),
])
def test_a_missing_file_is_reported_in_plain_words(sites, page, page_log, variant, missing,
                                                   words):
    """Soon after the HTTP error (from the error's own event, not a timeout), an alert names the
    file and what to do."""
    url = sites.url(variant)
    handler = fail_with(404)
    page.route("**/" + missing, handler)
    boot(page, url)
    page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                           timeout=120000)
    text = page.get_by_role("alert").inner_text()
    assert text.startswith(words) and missing in text and "python build.py" in text, text
    assert page_log.off_origin(url) == []


def test_a_tampered_numpy_wheel_is_refused_and_named(sites, page, page_log):
    """One flipped byte in the NumPy wheel: the page refuses it (its sha256 is pinned) and says
    so as soon as its download ends, naming the file, instead of a progress bar that sits."""
    url = sites.url("pyscript")
    with open(os.path.join(ROOT, "build", "test-pyscript", "vendor", "pyodide", WHEEL), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x01
    def tampered(route):
        route.fulfill(status=200, body=bytes(data), headers={"Content-Type": "application/zip"})
    page.route("**/" + WHEEL, tampered)
    boot(page, url)
    page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                           timeout=120000)
    text = page.get_by_role("alert").inner_text()
    assert text.startswith("NumPy could not be loaded") and WHEEL in text, text
    assert "sha256" in text and "python build.py" in text, text
    assert page.evaluate("document.documentElement.dataset.ready") != "true"


def test_a_missing_wasm_seen_after_python_began_starting_is_still_a_missing_download(sites, page):
    """Pyodide's data file can arrive, and Python begin to start, before the .wasm's 404 is seen:
    the alert names the missing download, whatever stage the boot had reached (CI saw this)."""
    url = sites.url("fallback")

    def late_404(route):
        time.sleep(1.5)  # the data file (9 MB, not delayed) is in by then
        route.fulfill(status=404, body="gone")

    page.route("**/pyodide.asm.wasm", late_404)
    boot(page, url)
    page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                           timeout=120000)
    text = page.get_by_role("alert").inner_text()
    assert text.startswith("The Python runtime could not be downloaded"), text
    assert "pyodide.asm.wasm" in text and "python build.py" in text


def test_the_worked_example_shows_while_python_boots(sites, page):
    """The first view comes from the build (buildtools/assembly/first_view.py): with Python's worker missing,
    the page still shows the worked example, read-only, next to the reason it cannot edit."""
    url = sites.url("fallback")
    # the worker's URL carries its parameters (?index=...&files=...)
    page.route(re.compile(r".*/boot/fallback-worker\.js(\?.*)?$"),
               lambda route: route.fulfill(status=404, body="gone"))
    page.goto(url + "index.html")
    page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                           timeout=120000)
    page.wait_for_function("() => { const el = document.getElementById('heatmap-logits');"
                           " return el.data && el.data.length; }", timeout=60000)
    alert = page.get_by_role("alert").inner_text()
    assert alert.startswith("The Python runtime could not be downloaded") or \
        alert.startswith("Python could not start"), alert
    assert "fallback-worker.js" in alert
    expected = np.array(reference_head(CLS, W_HEAD))
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-cls"), CLS, rtol=0, atol=0)
    assert page.locator("#logits-table td.predicted").all_inner_texts() == ["1.5811", "0.2000"]
    # not a recompute in the browser, and nothing to edit until Python is there
    assert page.evaluate("document.documentElement.dataset.renders") == "0"
    assert page.evaluate("document.documentElement.dataset.ready") != "true"
    assert not page.get_by_label("cls[0,1]", exact=True).is_editable()
    assert page.locator("#host-info").inner_text() == "…"
