"""Assembling a site folder from web/, pycore/ and the vendored artifacts.

assemble() fills a folder that buildtools/assembly/output.py swaps in for the output only once it is
complete. Every vendored file is hashed as it is copied in from the cache and compared with its
record or pin; the page's markers are filled and its URLs checked by
buildtools/assembly/page_html.py.
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys

from . import bytecode, csp, docs_html, gzipped, hosts
from ..data import class_names, page_digits
from ..onefile import page as onefile
from ..javascript import plotly_bundle, shared as shared_js
from ..errors import BuildError
from .page_html import absolute_urls, substitute_policy, substitute_runtime

# web/ entries that are not part of the site, or that only some hosts need.
NOT_COPIED = {"README.md", "boot"}
SKIP_NAMES = {"__pycache__", ".DS_Store"}
# The PyScript host's Python entry (web/py/), which its worker runs; not an importable module.
HOST_ENTRY = "worker.py"
# The PyScript host's NumPy bytecode (buildtools/assembly/bytecode.py), by NumPy's version.
NUMPY_BYTECODE = "bytecode/numpy-%s.zip"
STDLIB_BYTECODE = "bytecode/python_stdlib.zip"
# Each host's boot glue, from web/boot/.
PYSCRIPT_BOOT = ("pyscript.js", "pyodide-worker.mjs", "memory-idb.js", "fs-paths.mjs",
                 "wheel-libraries.mjs")
FALLBACK_BOOT = ("fallback.js", "fallback-worker.js")


# Data files of pycore/ that its Python reads at run time (the tiny ViT's weights): they go
# into the browser's file system next to the modules, as bytes ("binary": true in py-files.json).
PYCORE_DATA = (".npz",)


def python_files(root):
    """The Python files the boot glue writes into the browser's file system (py-files.json).

    pycore/ keeps its package folder; web/py/*.py (the page's Python, except worker.py, which is
    the PyScript host's entry) go to the top of the folder on sys.path, so `import bridge` works.
    pycore's data files (PYCORE_DATA) go with it, marked "binary": the fallback host's worker
    fetches them as bytes, not text (PyScript's `files` config fetches every file as bytes).
    """
    files = []
    pycore = os.path.join(root, "pycore")
    if not os.path.isfile(os.path.join(pycore, "__init__.py")):
        raise BuildError("pycore/__init__.py is missing", "run build.py from a full checkout")
    for dirpath, dirnames, filenames in os.walk(pycore):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_NAMES)
        for name in sorted(filenames):
            if name.endswith(".py") or name.endswith(PYCORE_DATA):
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                files.append({"url": rel, "path": rel})
                if not name.endswith(".py"):
                    files[-1]["binary"] = True
    web_py = os.path.join(root, "web", "py")
    for name in sorted(os.listdir(web_py)) if os.path.isdir(web_py) else []:
        if name.endswith(".py") and name != HOST_ENTRY:
            files.append({"url": "py/" + name, "path": name})
    if not any(f["path"] == "bridge.py" for f in files):
        raise BuildError("web/py/bridge.py is missing: the page has no Python to talk to",
                         "run build.py from a full checkout")
    return files


# pycore's first view of the page (buildtools/assembly/first_view.py), the worked example as the
# browser's Python will answer it, so the page shows it while the runtime boots: one source of
# truth.
FIRST_VIEW_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "first_view.py")


def first_view(root, log=print):
    """pycore's first view (default-view.json) as JSON text, or None with a warning.

    It runs in a child Python so that the build's own process never imports NumPy: a machine
    without NumPy still builds a working site, whose editors just fill in a little later.
    """
    try:
        done = subprocess.run([sys.executable, FIRST_VIEW_SCRIPT, root],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        done = None
        why = str(exc)
    if done is not None and done.returncode == 0:
        try:
            json.loads(done.stdout)
            return done.stdout.strip()
        except ValueError:
            why = "pycore printed something that is not JSON"
    elif done is not None:
        why = (done.stderr.strip().splitlines() or ["exit code %d" % done.returncode])[-1]
    log("warning: default-view.json not written (%s); the page stays empty until Python is "
        "ready. `pip install -e .` gives this Python NumPy." % why)
    return None


def _git_source(root):
    """The commit the site was built from, when root is a git checkout (else None)."""
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True, timeout=20)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "web",
                                "pycore", "build.py", "buildtools", "artifacts.json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               universal_newlines=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return {"commit": head.stdout.strip(), "uncommitted_changes": bool(dirty.stdout.strip())}


def _copy_tree(src, dst, skip=()):
    def ignore(folder, names):
        return [n for n in names if n in SKIP_NAMES or n.endswith(".pyc")
                or os.path.join(folder, n) in skip]
    shutil.copytree(src, dst, ignore=ignore)


class _Build(object):
    """One site being assembled: the checkout it is made from, the folder it is written into,
    the host it is for, the pins and cache its third-party files come from, and the log."""

    def __init__(self, root, site, host, manifest, cache, log):
        self.root, self.site, self.host = root, site, host
        self.manifest, self.cache, self.log = manifest, cache, log
        self.web = os.path.join(root, "web")

    def dest(self, artifact):
        """Where an artifact's files go in the site."""
        return os.path.join(self.site, *self.manifest.artifact(artifact).dest.split("/"))


def assemble(root, site, host, manifest, cache, log=print):
    """Write the complete site for `host` into the empty folder `site`; return build-info."""
    b = _Build(root, site, host, manifest, cache, log)
    index = os.path.join(b.web, "index.html")
    if not os.path.isfile(index):
        raise BuildError("web/index.html is missing", "run build.py from a full checkout")
    files = python_files(root)
    _copy_sources(b)
    # A CDN build's page and worker check what they load from the CDN against these pins.
    integrity = hosts.cdn_integrity(manifest, cache) if host.name == "cdn" else None
    policy = csp.policy(host, manifest, [hosts.import_map(integrity)] if integrity else ())
    with open(index, encoding="utf-8") as f:
        html = substitute_policy(f.read(), policy)
    _check_doc_links(b, html)
    html, heatmap_only = _vendor_plotly(b, html)
    data_info = _write_data(b, files)
    vendored = _vendor(b, heatmap_only)
    compiled, served_gzipped, bytecode_info = _python_runtime(b, files, integrity)
    one_file = _write_pages(b, html, files, compiled, integrity)
    if served_gzipped:
        gzipped.remove_originals(site, served_gzipped, manifest.artifact("pyodide").dest)
    _check_relative_urls(b)

    info = build_info(root, host, manifest, vendored, files, policy)
    info.update(data_info)
    info["bytecode_files"] = [f["url"] for f in compiled.files]
    info.update(bytecode_info)
    info["one_file"] = one_file
    write_json(site, "build-info.json", info)
    return info


def _copy_sources(b):
    """What the site takes from the checkout: everything in web/ but its README, the page
    (written from its template later) and the boot glue of other hosts; pycore/; the docs, as
    pages (buildtools/assembly/docs_html.py); and js/shared.js, the values the page's scripts share
    with Python."""
    for name in sorted(os.listdir(b.web)):
        src = os.path.join(b.web, name)
        if name in NOT_COPIED or name in SKIP_NAMES or name == "index.html":
            continue
        if os.path.isdir(src):
            skip = () if b.host.uses_pyscript else (os.path.join(b.web, "py", HOST_ENTRY),)
            _copy_tree(src, os.path.join(b.site, name), skip=skip)
        else:
            shutil.copy2(src, os.path.join(b.site, name))
    boot = PYSCRIPT_BOOT if b.host.uses_pyscript else FALLBACK_BOOT
    os.makedirs(os.path.join(b.site, "boot"))
    for name in boot:
        shutil.copy2(os.path.join(b.web, "boot", name), os.path.join(b.site, "boot", name))
    _copy_tree(os.path.join(b.root, "pycore"), os.path.join(b.site, "pycore"))
    docs_html.write(b.root, b.site)
    shared_js.write(b.root, b.site)


def _vendor_plotly(b, html):
    """Plotly.js with heatmaps only, where it can be bundled (see
    buildtools/javascript/plotly_bundle.py), and the page's tag pointed at it: (the page, the
    bundle's build-info record or None)."""
    heatmap_only = plotly_bundle.vendor(b.manifest.plotly_bundle, b.cache, b.dest("plotly"),
                                        b.log)
    if heatmap_only:
        official = "vendor/plotly/plotly-cartesian.min.js"
        if html.count(official) != 1:
            raise BuildError("web/index.html should load %s exactly once" % official,
                             "restore its <script> tag for Plotly.js")
        html = html.replace(official, "vendor/plotly/" + plotly_bundle.FILE_NAME)
    return html, heatmap_only


def _write_data(b, files):
    """The data files the page reads: the ImageNet-1k names of the ViT-B/16 preset's classes
    out of the pinned wheel (for the page, and beside bridge.py for its Python: added to
    `files`), py-files.json, the first view, the digit panel's held-out digits. Returns
    build-info's records of the names and digits (or why there are none)."""
    names_page, names_info = class_names.imagenet_names(b.manifest, b.cache, b.log)
    write_json(b.site, class_names.FILE_NAME, names_page)
    if names_page["available"]:
        files.append({"url": class_names.FILE_NAME, "path": class_names.PY_FILE})
    write_json(b.site, "py-files.json", {"files": files})
    view = first_view(b.root, b.log)
    if view is not None:
        with open(os.path.join(b.site, "default-view.json"), "w", encoding="utf-8") as f:
            f.write(view + "\n")
    digits_page, digits_info = page_digits.held_out_digits(b.root, b.manifest, b.cache, b.log)
    write_json(b.site, page_digits.FILE_NAME, digits_page)
    return {"digits": digits_info, "class_names": names_info}


def _vendor(b, heatmap_only):
    """Third-party files, from the cache, each checked as it is copied (cache.copy_files), and
    the NumPy wheel where the host loads one: their build-info records."""
    vendored = []
    for name in hosts.PAGE_ARTIFACTS + b.host.runtime_artifacts:
        art = b.manifest.artifact(name)
        if name == "plotly" and heatmap_only:
            vendored.append({"name": name, "dest": art.dest, **heatmap_only})
            continue
        b.cache.copy_unpacked(art, os.path.join(b.site, *art.dest.split("/")))
        vendored.append({"name": name, "package": art.package, "version": art.version,
                         "integrity": art.integrity, "license": art.license, "dest": art.dest,
                         **art.extra})
    if b.host.numpy_wheel:
        wheel = b.manifest.numpy_wheel
        # next to pyodide-lock.json, which names it: loadPackage("numpy") finds it there
        b.cache.copy_wheel(b.manifest, b.host.numpy_wheel,
                           os.path.join(b.dest(wheel.for_artifact), wheel.file_name))
        vendored.append({"name": "numpy-wheel", "package": "numpy", "version": wheel.version,
                         "sha256": wheel.sha256, "license": wheel.license,
                         "dest": b.manifest.artifact(wheel.for_artifact).dest,
                         "file": wheel.file_name})
    return vendored


def _python_runtime(b, files, integrity):
    """The PyScript host's Python: the page's, NumPy's and the standard library's bytecode,
    compiled by the site's own Pyodide (buildtools/assembly/bytecode.py), Pyodide's largest files
    gzipped (buildtools/assembly/gzipped.py), and pyscript.json. Returns (what was compiled, the
    files served gzipped, build-info's numpy_bytecode and stdlib_bytecode)."""
    host, manifest = b.host, b.manifest
    compiled = bytecode.NOTHING
    if host.name == "pyscript":  # its Pyodide is in the site: it compiles the page's Python
        pyodide = b.dest("pyodide")
        wheel = os.path.join(pyodide, manifest.numpy_wheel.file_name) if host.numpy_wheel else None
        compiled = bytecode.compile_site(b.site, files, pyodide, numpy_wheel=wheel,
                                         numpy_zip=NUMPY_BYTECODE % manifest.numpy_wheel.version,
                                         stdlib_zip=STDLIB_BYTECODE,
                                         log=b.log)
    served_gzipped = []
    if host.name == "pyscript" and compiled.stdlib:  # the build's own stdlib replaces Pyodide's
        served_gzipped = gzipped.compress(b.site, manifest.artifact("pyodide").dest,
                                          compiled.stdlib["url"])
    numpy_bytecode, stdlib_bytecode = (
        made and dict(made, bytes=gzipped.served_size(os.path.join(b.site, made["url"])))
        for made in (compiled.numpy, compiled.stdlib))
    if host.uses_pyscript:
        python_zip = hosts.python_zip(b.site, files + compiled.files)
        write_json(b.site, "pyscript.json", hosts.pyscript_config(
            host, manifest, python_zip, sizes=_runtime_sizes(host, manifest, b.site),
            numpy_bytecode=numpy_bytecode, stdlib_bytecode=stdlib_bytecode, integrity=integrity,
            gzipped=served_gzipped))
    return compiled, served_gzipped, {"numpy_bytecode": numpy_bytecode,
                                      "stdlib_bytecode": stdlib_bytecode}


def _write_pages(b, html, files, compiled, integrity):
    """index.html with the host's boot tags (once the runtime's files are in: their sizes drive
    the progress bar), the one file where the host can have it (buildtools/onefile/page.py), and
    index.html again with the link to download it. Returns build-info's one_file."""
    host, manifest = b.host, b.manifest
    sizes = _fallback_sizes(manifest, b.site) if host.name == "fallback" else None
    pyscript = b.dest("pyscript") if host.name == "pyscript" else None
    html = substitute_runtime(html, hosts.runtime_tags(
        host, manifest, sizes, integrity, sorted(os.listdir(pyscript)) if pyscript else ()))
    with open(os.path.join(b.site, "index.html"), "w", encoding="utf-8") as f:
        f.write(html)
    one_file = None
    if host.name == "pyscript" and host.numpy_wheel and compiled.stdlib:
        try:
            one_file = onefile.write(b.root, b.site, manifest, b.cache, files, compiled, html,
                                     b.log)
        except BuildError as exc:  # the site stands without it; the build says why
            b.log("warning: %s not written: %s (%s)" % (onefile.FILE_NAME, exc.what, exc.todo))
    else:
        b.log("one file: not written (it needs the PyScript host's runtime with NumPy, and "
              "Node.js to compile its Python)")
    with open(os.path.join(b.site, "index.html"), "w", encoding="utf-8") as f:
        f.write(onefile.with_download_link(html, one_file))
    return one_file


def _check_doc_links(b, html):
    """Every docs/<name>.html the page links to is a page the build wrote (a renamed doc
    would otherwise leave the explorer with a link to nothing)."""
    missing = sorted(set(href for href in re.findall(r'href="(docs/[^"#]+)', html)
                         if not os.path.isfile(os.path.join(b.site, *href.split("/")))))
    if missing:
        raise BuildError("web/index.html links to %s, which no doc in docs/ became"
                         % ", ".join(missing), "link to docs/<name>.html of a docs/<name>.md")


def _check_relative_urls(b):
    """Every URL the site loads is relative (a CDN build's CDNs aside), so the site works under
    any path and offline."""
    manifest = b.manifest
    allowed = [manifest.cdn.get("pyscript", "").split("{")[0],
               manifest.cdn.get("pyodide", "").split("{")[0]] if b.host.name == "cdn" else []
    problems = absolute_urls(b.site, allowed=[a for a in allowed if a])
    if problems:
        raise BuildError("the site would load non-relative URLs: " + ", ".join(
            "%s: %s" % p for p in problems[:10]),
            "use relative URLs (no leading '/', no http://) so the site works under any path "
            "and offline")


def _runtime_sizes(host, manifest, site):
    """Bytes of each file the PyScript worker counts for its progress bar, by file name: of the
    checked copies in the site (a CDN build leaves them to the CDN's Content-Length)."""
    sizes = {}
    if not host.offline:  # a CDN build does not fetch Pyodide from npm just for this
        return sizes
    folder = os.path.join(site, *manifest.artifact("pyodide").dest.split("/"))
    names = list(hosts.COUNTED_RUNTIME_FILES)
    if host.numpy_wheel:
        names.append(manifest.numpy_wheel.file_name)
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            sizes[name] = gzipped.served_size(path)
    return sizes


def _fallback_sizes(manifest, site):
    """Bytes of the fallback host's large downloads (hosts.FALLBACK_COUNTED_FILES), as copied."""
    folder = os.path.join(site, *manifest.artifact("pyodide-0.17").dest.split("/"))
    return dict((name, os.path.getsize(os.path.join(folder, name)))
                for name in hosts.FALLBACK_COUNTED_FILES
                if os.path.isfile(os.path.join(folder, name)))


def build_info(root, host, manifest, vendored, files, policy):
    if host.name == "fallback":
        rt = manifest.artifact("pyodide-0.17")
        runtime = {"pyodide": rt.version, "python": rt.extra.get("python"),
                   "numpy": rt.extra.get("numpy")}
    else:
        rt = manifest.artifact("pyodide")
        runtime = {"pyodide": rt.version, "python": rt.extra.get("python"),
                   "numpy": None if host.without_numpy else manifest.numpy_wheel.version,
                   "pyscript": manifest.artifact("pyscript").version}
    return {
        "host": host.name,
        "reason": host.reason,
        "offline": host.offline,
        "runtime": runtime,
        # index.html's <meta http-equiv>, which `build.py --serve` also sends as a header
        "content_security_policy": policy,
        "artifacts": vendored,
        "python_files": [f["url"] for f in files],
        "built_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": _git_source(root),
    }


def write_json(site, name, data):
    with open(os.path.join(site, name), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")


