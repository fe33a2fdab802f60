"""The CDN build gives the browser a pinned hash for everything it can check (docs/hosts.md,
"What a CDN build checks"): an import map whose integrity names every PyScript module at its
CDN URL, a modulepreload of core.js and of the modules it loads first, each with the same hash,
the import map allowed by its own hash in the page's policy, and in pyscript.json the sha256 of each file Pyodide's loader fetches
from the CDN, which boot/pyodide-worker.mjs checks. Every hash comes from the cache's records of
the checked tarballs, trusted only as the pinned files_sha256.

No network: the fake checkout and tiny fake tarballs of test_build_site.py."""
import base64
import hashlib
import html.parser
import json
import os

import pytest

from buildtools.assembly import csp, hosts
from buildtools.artifacts import manifest, unpacked
from buildtools.errors import BuildError
from test_build_site import ROOT, checkout, read, run_build  # noqa: F401 (a fixture)


class Tags(html.parser.HTMLParser):
    """The page's tags in order, with their attributes, and the import map's text."""

    def __init__(self):
        super().__init__()
        self.tags, self.importmap, self._in_map = [], None, False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_map = tag == "script" and dict(attrs).get("type") == "importmap"

    def handle_data(self, data):
        if self._in_map:
            self.importmap = data
            self._in_map = False


def selection(tmp, name):
    """{path under dest: file bytes} of a fake artifact, out of its checked tarball."""
    m = manifest.load(str(tmp / "repo" / "artifacts.json"))
    art = m.artifact(name)
    tarball = os.path.join(str(tmp / "cache" / "npm"), art.tarball_name)
    out = tmp / ("sel-" + name)
    files = unpacked.extract_selection(tarball, art, str(out))
    return m, {rel: (out / rel).read_bytes() for rel in files}


def sri(data):
    return "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


def test_every_pyscript_module_is_pinned_in_the_import_map_and_core_js_preloaded(checkout):
    info = run_build(checkout, "--runtime", "cdn")
    m, files = selection(checkout, "pyscript")
    core_dir, _ = hosts.pyscript_urls(hosts.Host("cdn", ""), m)
    page = Tags()
    page.feed(read(checkout, "index.html"))
    expected = {core_dir + rel: sri(data) for rel, data in files.items() if rel.endswith(".js")}
    assert core_dir + "core.js" in expected and len(expected) >= 2
    assert json.loads(page.importmap) == {"integrity": expected}
    names = [(tag, attrs.get("type") or attrs.get("rel")) for tag, attrs in page.tags]
    first_module = names.index(("script", "module"))
    assert names.index(("script", "importmap")) < first_module   # before any module loads
    preload = [a for t, a in page.tags if t == "link" and a.get("rel") == "modulepreload"]
    # PyScript's modules that the boot waits for, each with its pinned hash; the site's own
    # module, without
    pinned = [{"rel": "modulepreload", "href": core_dir + name,
               "integrity": expected[core_dir + name]}
              for name in ("core.js", "core-abc.js", "error-abc.js")]
    assert preload == pinned + [{"rel": "modulepreload", "href": "boot/memory-idb.js"}]
    # the inline import map is allowed by its own hash, and no inline script else
    scripts = dict(d.split(" ", 1) for d in info["content_security_policy"].split("; "))
    assert csp.source_hash(page.importmap) in scripts["script-src"].split()
    assert "'unsafe-inline'" not in scripts["script-src"]


def test_every_file_pyodides_loader_fetches_from_the_cdn_is_pinned_for_the_worker(checkout):
    run_build(checkout, "--runtime", "cdn")
    m, files = selection(checkout, "pyodide")
    config = json.loads(read(checkout, "pyscript.json"))
    index = config["vit"]["pyodide_index"]
    assert config["vit"]["integrity"] == {
        index + name: hashlib.sha256(files[name]).hexdigest()
        for name in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")}
    with open(os.path.join(ROOT, "web", "boot", "pyodide-worker.mjs"), encoding="utf-8") as f:
        worker = f.read()
    with open(os.path.join(ROOT, "web", "js", "host.js"), encoding="utf-8") as f:
        kit = f.read()  # the boot kit the worker imports
    assert "vit.integrity" in worker and "kit.sha256hex(" in worker
    assert 'crypto.subtle.digest("SHA-256"' in kit


def test_the_hashes_come_from_the_pinned_records_not_the_cache_alone(checkout):
    run_build(checkout, "--runtime", "cdn")   # fills the cache's unpacked folders
    m = manifest.load(str(checkout / "repo" / "artifacts.json"))
    folder = [os.path.join(str(checkout / "cache" / "unpacked"), d)
              for d in os.listdir(str(checkout / "cache" / "unpacked")) if d.startswith("pyscript-")][0]
    stamp = os.path.join(folder, unpacked.STAMP)
    with open(stamp, encoding="utf-8") as f:
        record = json.load(f)
    forged = "sha256-" + base64.b64encode(b"\0" * 32).decode()
    record["files"]["core.js"] = {"sha256": "00" * 32, "size": 1}
    with open(stamp, "w", encoding="utf-8") as f:
        json.dump(record, f)
    run_build(checkout, "--runtime", "cdn")
    page = Tags()
    page.feed(read(checkout, "index.html"))
    core_dir, _ = hosts.pyscript_urls(hosts.Host("cdn", ""), m)
    _, files = selection(checkout, "pyscript")
    assert json.loads(page.importmap)["integrity"][core_dir + "core.js"] == sri(files["core.js"])
    assert forged not in read(checkout, "index.html")


def test_a_cdn_build_without_pins_is_refused(checkout):
    path = checkout / "repo" / "artifacts.json"
    data = json.loads(path.read_text())
    del data["npm"]["pyodide"]["files_sha256"]
    path.write_text(json.dumps(data))
    with pytest.raises(BuildError) as err:
        run_build(checkout, "--runtime", "cdn")
    assert "pins no files_sha256 for pyodide@1.0.0" in str(err.value)
