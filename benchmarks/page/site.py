"""The sites page_bench.py measures: built for a host or given, what their build says, and the
floor pages served beside them by the project's own server (buildtools/serve.py), so that the
explorer is measured with the Content-Security-Policy it is served with."""
import functools
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from .common import ASSETS, ROOT, BenchError
from buildtools import serve


# ---- the site ----------------------------------------------------------------------------------

def build_site(out, host):
    """Build one host into `out` with the project's build.py (the PyScript host needs its NumPy
    wheel: downloaded, cached, or from the folder VIT_HEAD_MIRROR names)."""
    cmd = [sys.executable, str(ROOT / "build.py"), "--runtime", host, "--out", str(out)]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError("the build failed (%s):\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    print("built the %s host in %.1f s: %s" % (host, time.monotonic() - started, last))
    return out


def site_host(site):
    """"pyscript" or "fallback", from the site's build-info.json."""
    host = build_info(site).get("host")
    if host not in ("pyscript", "fallback"):
        raise BenchError("%s is a %r build; this benchmark measures the offline hosts "
                         "(pyscript, fallback)" % (site, host))
    return host


def runtime_index_url(site):
    """Where the explorer's fallback glue loads Pyodide from (its data-index-url), site-relative.

    The floor must boot the very same files; the floor page is written for Pyodide 0.17's
    loadPyodide({indexURL}).
    """
    html = (site / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script[^>]*src="boot/fallback\.js"[^>]*data-index-url="([^"]+)"', html)
    if not m:
        raise BenchError("%s/index.html does not boot the fallback host (boot/fallback.js with "
                         "data-index-url); build it with `python build.py --runtime fallback`" % site)
    index_url = m.group(1) if m.group(1).endswith("/") else m.group(1) + "/"
    if not (site / index_url / "pyodide.js").is_file():
        raise BenchError("%s has no %spyodide.js" % (site, index_url))
    return index_url


def build_info(site):
    try:
        return json.loads((site / "build-info.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def plotly_url(site):
    """The Plotly.js the explorer loads (build.py vendors a heatmap-only bundle or the official
    cartesian one): the Plotly floor must call the very same code."""
    html = (site / "index.html").read_text(encoding="utf-8")
    # preloaded by a <link id="plotly-js"> (or, in builds before it, a <script src>)
    m = re.search(r'<(?:link|script)[^>]*(?:href|src)="(vendor/plotly/[^"]+\.js)"', html)
    if not m or not (site / m.group(1)).is_file():
        raise BenchError("%s/index.html loads no vendored Plotly.js" % site)
    return m.group(1)


def floor_pages(site, host):
    """The floor pages, served from memory next to the site (which is never written to)."""
    read = lambda name: (ASSETS / name).read_text(encoding="utf-8")
    pages = {"/floor-plotly.html": read("floor-plotly.html").replace(
        "{{PLOTLY_REPLAY_JS}}", read("plotly_replay.js")).replace("{{PLOTLY_URL}}", plotly_url(site)),
             "/floor-scrub.html": read("floor-scrub.html")}
    if host == "fallback":
        pages["/floor-boot.html"] = read("floor-boot.html").replace("{{INDEX_URL}}",
                                                                   runtime_index_url(site))
        return pages
    # The PyScript floors boot the site's own PyScript and Pyodide the plain way: PyScript's
    # config with the vendored pyodide.mjs as its interpreter and NumPy as a package.
    config = json.loads((site / "pyscript.json").read_text(encoding="utf-8"))
    html = (site / "index.html").read_text(encoding="utf-8")
    core = re.search(r'data-core="([^"]+)"', html)
    py_config = re.search(r"<py-config[^>]*>.*?</py-config>", html, re.S)
    if not core or not config.get("vit", {}).get("numpy"):
        raise BenchError("%s is not a PyScript build with NumPy" % site)
    stdlib = site / config["vit"]["pyodide_index"] / "python_stdlib.zip"
    if not stdlib.exists():
        # the site serves the build's standard library in place of Pyodide's own, which is no
        # longer in it: the plain floors get Pyodide's, as published, from the build's cache
        from buildtools.artifacts.cache import Cache, default_cache_dir
        from buildtools.artifacts.manifest import load
        published = Path(tempfile.mkdtemp(prefix="page-bench-pyodide-"))
        Cache(default_cache_dir(), offline=True).copy_unpacked(
            load(str(ROOT / "artifacts.json")).artifact("pyodide"), str(published))
        pages["/" + config["vit"]["pyodide_index"] + "python_stdlib.zip"] = (
            published / "python_stdlib.zip").read_bytes()
    floor_config = {"interpreter": config["vit"]["pyodide_index"] + "pyodide.mjs",
                    "packages": ["numpy"], "packages_cache": "passthrough",
                    "plugins": config.get("plugins", [])}
    def worker_floor(config):
        return (read("floor-pyscript-worker.html")
                .replace("{{CORE_URL}}", core.group(1))
                .replace("{{PY_CONFIG}}", py_config.group(0) if py_config else "")
                .replace("{{CONFIG}}", json.dumps(dict(config, sync_main_only=True))))
    pages["/floor-pyscript-worker.html"] = worker_floor(floor_config)
    pages["/floor-worker.py"] = read("floor-worker.py")
    vit = config["vit"]
    if vit.get("stdlib"):
        # The same floor with the bytecode the build made (buildtools/assembly/bytecode.py): its standard
        # library zip, through an interpreter module that hands it to loadPyodide, and NumPy's
        # bytecode unpacked into site-packages as the explorer has them.
        # (not the explorer's own zip, which unpacks into its python_dir)
        zipped = {url: path for url, path in config["files"].items()
                  if path.endswith("/*") and not path.startswith(vit["python_dir"] + "/")}
        pages["/floor-bytecode.mjs"] = (
            "// The bytecode floor's interpreter (page_bench.py): the site's Pyodide, with the\n"
            "// build's standard library zip.\n"
            "import * as pyodide from './%spyodide.mjs';\n"
            "export const version = pyodide.version;\n"
            "export const loadPyodide = (options) => pyodide.loadPyodide({ ...options,\n"
            "  indexURL: new URL('./%s', import.meta.url).href,\n"
            "  stdLibURL: new URL('./%s', import.meta.url).href });\n"
            % (vit["pyodide_index"], vit["pyodide_index"], vit["stdlib"]))
        pages["/floor-pyscript-bytecode.html"] = worker_floor(
            dict(floor_config, interpreter="floor-bytecode.mjs", files=zipped)).replace(
            "<title>Runtime floor:", "<title>Runtime floor with the build's bytecode:")
    pages["/floor-pyscript-main.html"] = read("floor-pyscript-main.html").replace(
        "{{CORE_URL}}", core.group(1))
    pages["/floor-main.json"] = json.dumps(floor_config)
    return pages


# ---- serving -----------------------------------------------------------------------------------

class BenchHandler(serve.SiteHandler):
    """The project's static server (its MIME types, nosniff, the site's own
    Content-Security-Policy on every file of the site), plus pages served from memory: the
    floors, which are the benchmark's pages, not the site's, and so carry no policy."""

    quiet = True
    overlay = {}  # URL path -> text or bytes (HTML, JSON, Python); set on a subclass per server

    def send_head(self):
        self.policy = type(self).policy  # one handler answers a connection's every request
        path = urlsplit(self.path).path
        page = self.overlay.get(path)
        local = self.translate_path(path)
        if page is None and not os.path.exists(local) and os.path.isfile(local + ".gz"):
            # a file the site serves gzipped (buildtools/assembly/gzipped.py), which the floors' plain
            # Pyodide asks for by its own name
            with open(local + ".gz", "rb") as f:
                page = gzip.decompress(f.read())
        elif page is not None:
            self.policy = None
        if page is None:
            return super().send_head()
        body = page if isinstance(page, bytes) else page.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", self.extensions_map.get(os.path.splitext(path)[1],
                                                                 "text/plain"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def start_server(site, overlay):
    """Serve `site` (and the `overlay` pages) on 127.0.0.1, a free port, in a daemon thread."""
    handler = type("Handler", (BenchHandler,), {"overlay": overlay})
    server = serve.SiteServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, name="site-server", daemon=True).start()
    return server, "http://127.0.0.1:%d/" % server.server_address[1]
