"""Every runtime host this machine can build boots the same page and computes the same head.

Per host, on one page booted once for this file: the page becomes ready, showing progress while
it boots; the worked example's logits in heatmap-logits equal the head in plain Python
(tests/reference.py); no request leaves the site's origin; no console error, uncaught page error
or Python traceback; pycore's examples pass in its Python; the PyScript host reads its Python
from the build's bytecode and its NumPy libraries compiled early. And what each build holds, and
the CDN build's requests. A host that cannot boot: test_host_failures.py.
"""
import gzip
import io
import os
import re
import shutil
import time
import zipfile

import numpy as np
import pytest

from reference import reference_head

from buildtools.artifacts import manifest
from buildtools.javascript import plotly_bundle
from buildtools.artifacts.cache import Cache, default_cache_dir
from buildtools.assembly.page_html import absolute_urls
from reference import WORKED_LOGITS

from .conftest import ROOT, PageLog
from .hostkit import CLS, RECORD_STATUS, W_HEAD, WHEEL
from .pagekit import edit, heatmap_z, on_bridge, state_fragment, wait_ready

pytestmark = [pytest.mark.browser]


# What the PyScript host's boot read from the build's bytecode, asked of its worker's Python by
# this file only: py/worker.py gets this function appended (a route), and the page's PyScript
# worker object is kept (an init script), so the test calls it as the page calls dispatch.
BYTECODE_PROBE = '''

import sys
from pyscript import config

PYTHON_DIR = config["vit"]["python_dir"]


def bytecode_modules():
    """"<used> of <imported>; NumPy <used> of <imported>; stdlib <used> of <imported>": of the
    explorer's modules imported so far, of NumPy's and of the standard library's, how many Python
    read from the build's bytecode (buildtools/assembly/bytecode.py). For the explorer and NumPy, those
    whose checked-hash .pyc matches its source as Python checks it (PEP 552); for the standard
    library, which zipimport reads from its zip, those it read from a .pyc."""
    import importlib.util
    import numpy
    numpy_dir = numpy.__file__.rsplit("/", 1)[0] + "/"
    counts = {PYTHON_DIR + "/": [0, 0], numpy_dir: [0, 0]}  # folder: [used, imported]
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        origin, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
        folder = next((f for f in counts if origin and origin.startswith(f)), None)
        if not (folder and origin.endswith(".py")):
            continue
        counts[folder][1] += 1
        if not cached:
            continue
        try:
            with open(cached, "rb") as f:
                header = f.read(16)
            with open(origin, "rb") as f:
                source = f.read()
        except OSError:
            continue
        checked_hash = int.from_bytes(header[4:8], "little") == 3
        if (header[:4] == importlib.util.MAGIC_NUMBER and checked_hash
                and header[8:16] == importlib.util.source_hash(source)):
            counts[folder][0] += 1
    # The standard library, from its zip (not the modules Python has frozen into itself):
    # zipimport names a module by the file it read, name.pyc or name.py
    zipped = next(p for p in sys.path if p.endswith(".zip")) + "/"
    stdlib = [spec.origin for spec in (getattr(m, "__spec__", None) for m in list(sys.modules.values()))
              if (getattr(spec, "origin", None) or "").startswith(zipped)]
    return "%d of %d; NumPy %d of %d; stdlib %d of %d" % (
        *counts[PYTHON_DIR + "/"], *counts[numpy_dir],
        sum(origin.endswith(".pyc") for origin in stdlib), len(stdlib))


sync.bytecode_modules = bytecode_modules
'''

KEEP_PYSCRIPT_WORKER = """
window.__pyWorkers = [];
const NativeWorker = window.Worker;
window.Worker = class extends NativeWorker {
  constructor(...args) { super(...args); window.__pyWorkers.push(this); }
};
"""


def with_bytecode_probe(route):
    """py/worker.py as the site serves it, and BYTECODE_PROBE after it."""
    response = route.fetch()
    route.fulfill(response=response, body=response.text() + BYTECODE_PROBE)


def bytecode_modules(page):
    """The PyScript worker's answer to BYTECODE_PROBE's bytecode_modules()."""
    return page.evaluate(
        "() => window.__pyWorkers.find((w) => w.sync).sync.bytecode_modules()")


class Booted:
    """A host's page booted once, cold (a new browser context), for the tests below that read
    what a plain boot did (nothing held, no route but the bytecode probe appended to PyScript's
    py/worker.py, which runs only when a test asks): its boot status, its first logits, the
    modules it read from bytecode, PyScript's XPath queries while it loaded, its bridge. What
    the boot showed is recorded as soon as it is ready, so no test depends on another's edits."""

    def __init__(self, browser, context_args, url):
        self.url = url
        self.context = browser.new_context(**context_args)
        self.page = self.context.new_page()
        self.log = PageLog(self.page)
        for script in (RECORD_STATUS, COUNT_XPATH, KEEP_BRIDGE, KEEP_PYSCRIPT_WORKER):
            self.page.add_init_script(script)
        self.page.route("**/py/worker.py", with_bytecode_probe)  # PyScript's only
        start = time.monotonic()
        self.page.goto(url + "index.html" + state_fragment({"cls": CLS, "W_head": W_HEAD}))
        wait_ready(self.page)
        self.ready_s = time.monotonic() - start
        self.logits = heatmap_z(self.page, "heatmap-logits")
        self.texts = self.page.evaluate("window.__bootTexts")
        self.xpath_while_loading = self.page.evaluate("window.__xpath")

    def close(self):
        self.log.close()
        self.context.close()


@pytest.fixture(scope="module")
def booted(sites, browser, browser_context_args):
    """booted(variant) -> that host's Booted page, one per host for this file."""
    found = {}

    def get(variant):
        if variant not in found:
            found[variant] = Booted(browser, browser_context_args, sites.url(variant))
        return found[variant]
    yield get
    for one in found.values():
        one.close()


@pytest.mark.parametrize("variant", ["fallback", "pyscript"])
def test_host_boots_and_computes_the_worked_example(variant, booted):
    shown = booted(variant)
    page, url = shown.page, shown.url
    print("\n%s host ready in %.1f s" % (variant, shown.ready_s))
    z = shown.logits
    expected = np.array(reference_head(CLS, W_HEAD))
    # NumPy 1.17 in the browser and this NumPy may round the last bit differently
    np.testing.assert_allclose(z, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z, WORKED_LOGITS, atol=5e-5)
    texts = shown.texts
    for words in ("Downloading", "Loading the explorer"):
        assert any(words in t for t in texts), "no %r in the boot status: %r" % (words, texts)
    # what Python does after the downloads: the PyScript host loads NumPy while Python starts
    assert any("Starting Python" in t or "Loading NumPy" in t for t in texts), texts
    if variant == "pyscript":  # its worker counts the bytes of every large download
        assert any(re.search(r"Downloading .*: \d+\.\d of \d+\.\d MB", t) for t in texts), texts
        # each stage said once its work begins, in order, and the bar ends with the downloads
        # (the explorer's files too, downloaded early): never "Downloading" while Python starts
        stages = ["Downloading", "Starting Python", "Loading NumPy", "Loading the explorer"]
        said = [next(k for k, words in enumerate(stages) if words in t)
                for t in texts if any(words in t for words in stages)]
        assert said == sorted(said) and set(said) == set(range(len(stages))), texts
    assert page.locator(".py-error").count() == 0  # PyScript's in-page error box
    shown.log.assert_clean(url)

def test_numpys_webassembly_libraries_are_compiled_while_python_starts(sites, booted):
    """boot/wheel-libraries.mjs compiles the *.so of the NumPy wheel as it arrives, and Pyodide
    gets a library's early module for bytes equal to those compiled (tests/test_wheel_libraries.py
    checks the matching); how many are compiled before Pyodide asks depends on the engine's pace,
    so here: some were, and none that is not a library of the wheel."""
    folder = os.path.join(ROOT, "build", "test-pyscript")
    wheels = [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files
              if f.startswith("numpy-") and f.endswith(".whl")]
    assert len(wheels) == 1, wheels
    with zipfile.ZipFile(wheels[0]) as z:
        shared = [n for n in z.namelist() if n.endswith(".so")]
    assert len(shared) >= 10  # numpy/_core/_multiarray_umath, linalg, random, fft, ...
    said = booted("pyscript").page.evaluate("document.documentElement.dataset.earlyLibraries")
    used, compiled = map(int, said.split(" of "))
    assert 1 <= used <= compiled <= len(shared), said


def test_the_pyscript_host_imports_the_explorer_from_the_builds_bytecode(sites, booted, tmp_path):
    """build.py compiles the Python with the site's own Pyodide (buildtools/assembly/bytecode.py): every
    module the boot imports, the explorer's, NumPy's and the standard library's, is read from
    bytecode (the first two from a .pyc whose checked hash matches its source)."""
    url = sites.url("pyscript")
    shipped = sites.info["pyscript"]["bytecode_files"]
    # the build compiles with Node.js; without it these tests cannot check what they are for
    assert shutil.which("node"), "Node.js is needed to compile the PyScript host's bytecode"
    sources = [u for u in sites.info["pyscript"]["python_files"] if u.endswith(".py")]
    assert len(shipped) == len(sources)
    for source in sources:
        folder, name = os.path.split(source)
        assert os.path.join(folder, "__pycache__", name[:-3] + ".cpython-314.pyc") in shipped
    # the build counts the modules Python's warm-up imports too (numpy.random: buildtools/
    # bytecode.py's ALSO), so the page is asked once its warm-up is done
    page = booted("pyscript").page
    page.wait_for_function("() => document.documentElement.dataset.warmUp === 'done'",
                           timeout=120000)
    said = bytecode_modules(page)
    explorer, numpy, stdlib_said = re.fullmatch(
        r"(\d+ of \d+); NumPy (\d+ of \d+); stdlib (\d+ of \d+)", said).groups()
    used, imported = map(int, explorer.split(" of "))
    # bridge, pycore and its modules: all that the boot imports, each from its .pyc
    assert used == imported >= 30, said
    # NumPy's: the zip holds the bytecode of every NumPy module the build saw the boot import,
    # and the page read each of them from it
    folder = os.path.join(ROOT, "build", "test-pyscript")
    zipped = sites.info["pyscript"]["numpy_bytecode"]
    with zipfile.ZipFile(os.path.join(folder, zipped["url"])) as z:
        assert len(z.namelist()) == zipped["modules"] >= 50
    used, imported = map(int, numpy.split(" of "))
    assert used == imported == zipped["modules"], said
    # The standard library: Pyodide's zip, every file as published but the .py of each module the
    # build saw the boot import, which is its .pyc instead, and which the page read; served
    # gzipped, and Pyodide's own zip, which no boot asks for, is not in the site
    stdlib = sites.info["pyscript"]["stdlib_bytecode"]
    assert not os.path.exists(os.path.join(folder, "vendor", "pyodide", "python_stdlib.zip"))
    assert not os.path.exists(os.path.join(folder, stdlib["url"]))
    published = tmp_path / "pyodide"
    Cache(default_cache_dir(), offline=True).copy_unpacked(
        manifest.load(os.path.join(ROOT, "artifacts.json")).artifact("pyodide"), str(published))
    with open(os.path.join(folder, stdlib["url"] + ".gz"), "rb") as f:
        served = zipfile.ZipFile(io.BytesIO(gzip.decompress(f.read())))
    with zipfile.ZipFile(str(published / "python_stdlib.zip")) as original:
        names = set(original.namelist())
        added, replaced = set(served.namelist()) - names, names - set(served.namelist())
        assert all(served.read(name) == original.read(name) for name in names - replaced)
    assert {name[:-1] for name in added} == replaced
    assert len(added) == stdlib["modules"] and all(n.endswith(".pyc") for n in added)
    used, imported = map(int, stdlib_said.split(" of "))
    assert used == imported >= 100, said
    booted("pyscript").log.assert_clean(url)


# Counts the XPath queries made on the page: PyScript's core answers DOM changes with them.
COUNT_XPATH = """
window.__xpath = 0;
const createExpression = XPathEvaluator.prototype.createExpression;
XPathEvaluator.prototype.createExpression = function (...args) {
  window.__xpath += 1;
  return createExpression.apply(this, args);
};
const evaluate = Document.prototype.evaluate;
Document.prototype.evaluate = function (...args) {
  window.__xpath += 1;
  return evaluate.apply(this, args);
};
"""


def test_pyscript_does_not_watch_the_explorers_redraws(booted):
    """PyScript's core observes the whole document for Python it should run (<script type="py">,
    py-* attributes) and answers every DOM change with XPath queries, main-thread work in every
    edit (docs/performance.md). The explorer has none, so boot/pyscript.js stops those
    observers: an edit, whose redraws add hundreds of nodes, makes no XPath query; and Python
    still answers."""
    shown = booted("pyscript")
    page = shown.page
    assert shown.xpath_while_loading > 0  # PyScript did watch the document while it loaded
    page.evaluate("window.__xpath = 0")
    edit(page, "cls[0,1]", "2.5")
    edit(page, "W_head[3,2]", "-0.75")
    assert page.evaluate("window.__xpath") == 0
    cls = [row[:] for row in CLS]
    cls[0][1] = 2.5
    w = [row[:] for row in W_HEAD]
    w[3][2] = -0.75
    expected = np.array(reference_head(cls, w))
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), expected, rtol=1e-12, atol=1e-12)
    shown.log.assert_clean(shown.url)


@pytest.mark.parametrize("variant, host, numpy", [("fallback", "fallback", "1.17.5"),
                                                  ("pyscript-without-numpy", "pyscript", None)])
def test_built_sites_say_what_they_are(sites, variant, host, numpy):
    sites.url(variant)
    info = sites.info[variant]
    assert info["host"] == host and info["offline"] is True and info["reason"]
    assert info["runtime"]["numpy"] == numpy
    folder = os.path.join(ROOT, "build", "test-" + variant)
    assert absolute_urls(folder) == []
    vendored = {a["name"] for a in info["artifacts"]}
    assert {"plotly", "katex"} <= vendored
    with open(os.path.join(folder, "index.html"), encoding="utf-8") as f:
        html = f.read()
    if plotly_bundle.esbuild_platform() == "linux-x64":  # the platform artifacts.json pins
        # Plotly.js with heatmaps only, bundled by build.py, with every bundled licence
        assert "vendor/plotly/plotly-heatmap.min.js" in html and "plotly-cartesian" not in html
        with open(os.path.join(folder, "vendor", "plotly", "THIRD-PARTY-LICENSES.txt"),
                  encoding="utf-8") as f:
            licences = f.read()
        pinned = manifest.load(os.path.join(ROOT, "artifacts.json")).plotly_bundle["packages"]
        for entry in pinned:
            assert "%s %s (" % (entry["package"], entry["version"]) in licences
    if host == "fallback":
        runtime = os.path.join(folder, "vendor", "pyodide-0.17")
        # only Pyodide's core and NumPy, of the ~150 packages in the 185 MB tarball
        assert sorted(f for f in os.listdir(runtime) if f.endswith(".data")) == [
            "numpy.data", "pyodide.asm.data"]
        size = sum(os.path.getsize(os.path.join(runtime, f)) for f in os.listdir(runtime))
        assert size < 30e6


CONTENT_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css",
                 ".wasm": "application/wasm", ".json": "application/json"}


def test_the_cdn_build_asks_the_cdns_for_exactly_the_pinned_files(sites, browser, tmp_path):
    """`--runtime cdn` makes a page that loads PyScript, Pyodide and NumPy from jsDelivr. These
    machines cannot reach it, so every request to the CDN is answered here from the pinned files
    the build checked (the same versions, from its cache, checked against artifacts.json):
    a wrong URL, version or file name in the CDN build asks for a file that is not there and fails
    this test; so does a page that does not compute the worked example with what it got."""
    m = manifest.load(os.path.join(ROOT, "artifacts.json"))
    vendored = os.path.join(ROOT, "build", "test-pyscript")
    sites.url("pyscript")  # builds the vendored files if this session has not yet
    url = sites.url("cdn")
    folders = {
        m.cdn["pyscript"].format(version=m.artifact("pyscript").version):
            os.path.join(vendored, m.artifact("pyscript").dest),
        m.cdn["pyodide"].format(version=m.artifact("pyodide").version): str(tmp_path),
    }
    # Pyodide's files as published (the vendored site serves some gzipped, and not its
    # standard library zip), and the NumPy wheel the PyScript build vendored
    Cache(default_cache_dir(), offline=True).copy_unpacked(m.artifact("pyodide"), str(tmp_path))
    shutil.copy(os.path.join(vendored, m.artifact("pyodide").dest, WHEEL), str(tmp_path))
    served, unpinned = [], []

    def answer(route):
        asked = route.request.url.split("?")[0].split("#")[0]
        for prefix, folder in folders.items():
            path = os.path.join(folder, asked[len(prefix):]) if asked.startswith(prefix) else None
            if path and os.path.isfile(path):
                served.append(asked[len(prefix):])
                route.fulfill(path=path, headers={
                    "Access-Control-Allow-Origin": "*",
                    "Content-Type": CONTENT_TYPES.get(os.path.splitext(path)[1],
                                                      "application/octet-stream")})
                return
        unpinned.append(asked)
        route.fulfill(status=404, body="not a pinned file")

    context = browser.new_context()
    try:
        context.route("https://**/*", answer)
        page = context.new_page()
        log = PageLog(page)
        page.goto(url + "index.html" + state_fragment({"cls": CLS, "W_head": W_HEAD}))
        wait_ready(page)
        assert unpinned == [], "the CDN build asked for files that are not pinned: %s" % unpinned
        for name in ("core.js", "pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip", WHEEL):
            assert name in served, "%s never came from the CDN: %s" % (name, served)
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5)
        assert page.locator("#host-info").inner_text().count("NumPy 2.4.3") == 1
        log.other_origins.append("https://cdn.jsdelivr.net")
        log.assert_clean(url)
    finally:
        context.close()


# Keeps the bridge the host hands the page, so a test can send a request the page has no button
# for.
KEEP_BRIDGE = on_bridge("self.__bridge = bridge;")


@pytest.mark.parametrize("variant", ["fallback", "pyscript"])
def test_pycore_examples_pass_inside_each_runtime(variant, booted):
    """pycore's docstring examples (its core cases), run by the page's own Python: Pyodide 0.17
    with NumPy 1.17 on the fallback host, Pyodide 314 with NumPy 2.4 on the PyScript host, so
    the code written for old and new NumPy runs where it is used."""
    shown = booted(variant)
    page, url = shown.page, shown.url
    result = page.evaluate("self.__bridge.call({op: 'selfcheck'}).then(a => a.selfcheck)")
    print("\n%s: Python %s, NumPy %s: %d examples in %d modules, %d failed"
          % (variant, result["python"], result["numpy"], result["attempted"], result["modules"],
             result["failed"]))
    expected = {"fallback": ("3.8.", "1.17."), "pyscript": ("3.14.", "2.4.")}[variant]
    assert result["python"].startswith(expected[0]) and result["numpy"].startswith(expected[1])
    assert result["attempted"] >= 150 and result["modules"] >= 20
    assert result["failed"] == 0, "\n\n".join(f["report"] for f in result["failures"])
    shown.log.assert_clean(url)
