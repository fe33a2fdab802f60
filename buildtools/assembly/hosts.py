"""The runtime hosts: which artifacts each one vendors and which tags boot it.

fallback  Pyodide 0.17.1 (Python 3.8, NumPy 1.17.5) from npm, started by web/boot/fallback.js.
          Everything is on npm, so it builds wherever npm answers.
pyscript  @pyscript/core + Pyodide 314 from npm + the NumPy wheel from Pyodide's release CDN
          (or a mirror of it), in a PyScript worker running web/py/worker.py. Needs the wheel,
          which is not on npm.
cdn       like pyscript, but the page loads PyScript, Pyodide and NumPy from public CDNs; only
          Plotly and KaTeX are vendored. A few hundred kB, for course websites.
"""
import base64
import io
import json
import os
import zipfile
from dataclasses import dataclass
from typing import Optional

from ..errors import BuildError

# Where both hosts put the Python files (py-files.json) in the in-browser file system. The boot
# glue adds it to sys.path; web/boot/fallback-worker.js and web/py/worker.py use the same folder.
PYTHON_DIR = "/home/pyodide/explorer"

# Vendored by every host: the page's own third-party JS and CSS.
PAGE_ARTIFACTS = ("plotly", "katex")

# PyScript plugins the page does not use; disabling them saves loading their chunks.
UNUSED_PYSCRIPT_PLUGINS = ("codemirror", "deprecations-manager", "donkey", "py-editor", "py-game",
                           "py-terminal")
# PyScript's modules that its core.js loads before it defines <py-script>, which the boot waits
# for: core.js imports its core-<hash>.js, which loads the error plugin (error-<hash>.js), the one
# plugin that cannot be switched off. The page preloads them (modulepreload) with its first
# requests, so that they download while the page is parsed, not one after another once the boot
# script runs.
PYSCRIPT_FIRST_MODULES = ("core-", "error-")

# The explorer's Python (py-files.json's files and their bytecode) as one zip, which PyScript
# unpacks into PYTHON_DIR: one request, not about a hundred, which a browser sends six at a time
# to a server, while the worker's own runtime downloads wait behind them.
PYTHON_ZIP = "py/explorer.zip"

NO_NUMPY_MESSAGE = ("This build has no NumPy for Pyodide {major}: rebuild with --numpy-wheel "
                    "or use the fallback host")


@dataclass
class Host:
    name: str  # "fallback" | "pyscript" | "cdn"
    reason: str  # why this host was built, for the console and build-info.json
    numpy_wheel: Optional[str] = None  # path of the checked wheel (pyscript host)
    without_numpy: bool = False  # pyscript host built without NumPy (tests the error path)

    @property
    def runtime_artifacts(self):
        return {"fallback": ("pyodide-0.17",), "pyscript": ("pyscript", "pyodide"),
                "cdn": ()}[self.name]

    @property
    def uses_pyscript(self):
        return self.name in ("pyscript", "cdn")

    @property
    def offline(self):
        return self.name != "cdn"


def choose(requested, manifest, cache, numpy_wheel=None, without_numpy=False, log=print):
    """Decide which host to build. Raises BuildError when a forced host cannot be built."""
    if without_numpy and requested != "pyscript":
        raise BuildError("--without-numpy only makes sense with --runtime pyscript",
                         "add --runtime pyscript (it builds the page's NumPy-missing error path)")
    if requested == "fallback":
        return Host("fallback", "requested with --runtime fallback")
    if requested == "cdn":
        return Host("cdn", "requested with --runtime cdn: PyScript, Pyodide and NumPy come "
                           "from public CDNs at run time")
    if requested == "pyscript" and without_numpy:
        return Host("pyscript", "requested with --runtime pyscript --without-numpy: the page "
                                "must show that NumPy is missing", without_numpy=True)
    wheel = manifest.numpy_wheel
    pyodide = manifest.artifact(wheel.for_artifact)
    path, why_not = cache.numpy_wheel(manifest, given=numpy_wheel,
                                      retry=(requested == "pyscript"))
    if path:
        return Host("pyscript", "the NumPy %s wheel for Pyodide %s was %s"
                    % (wheel.version, pyodide.version, cache.wheel_source), numpy_wheel=path)
    if requested == "pyscript":
        raise BuildError(
            "the PyScript host needs %s and %s" % (wheel.file_name, why_not),
            "download %s on a machine with internet and pass --numpy-wheel PATH, or build "
            "the offline fallback host with --runtime fallback" % manifest.wheel_url())
    return Host("fallback", "the NumPy wheel for Pyodide %s could not be obtained (%s), so the "
                            "offline fallback host (Pyodide 0.17.1, NumPy 1.17.5) was built; "
                            "for the PyScript host pass --numpy-wheel PATH (the file at %s)"
                % (pyodide.version, why_not, manifest.wheel_url()))


def pyscript_urls(host, manifest):
    """(pyscript dist folder, pyodide index folder) as the page will see them."""
    if host.name == "cdn":
        ps, py = manifest.artifact("pyscript"), manifest.artifact("pyodide")
        try:
            return (manifest.cdn["pyscript"].format(version=ps.version),
                    manifest.cdn["pyodide"].format(version=py.version))
        except KeyError:
            raise BuildError("artifacts.json has no 'cdn' URLs for pyscript and pyodide",
                             "restore the 'cdn' section of artifacts.json")
    return (manifest.artifact("pyscript").dest + "/", manifest.artifact("pyodide").dest + "/")


# The files of Pyodide that its loader fetches (in PyScript's worker, through
# boot/pyodide-worker.mjs, which checks each against its pinned sha256 in a CDN build).
CDN_FETCHED = ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def cdn_integrity(manifest, cache):
    """What a CDN build's page and worker check the CDN's files against: the sha256 of every file
    the build would vendor, from the cache's records of the checked npm tarballs, each record
    trusted only as the artifact's pinned ``files_sha256`` (buildtools/artifacts/cache.py).

    Returns
    -------
    dict
        ``{"modules": {CDN URL: "sha256-<base64>"}}`` for PyScript's JavaScript (the page's
        import map and modulepreload) and ``{"fetched": {CDN URL: sha256 hex}}`` for Pyodide's
        files of :data:`CDN_FETCHED` (boot/pyodide-worker.mjs).

    Raises
    ------
    BuildError
        An artifact without a pinned ``files_sha256``, or whose files are not the pinned ones.
    """
    pyscript_dir, pyodide_dir = pyscript_urls(Host("cdn", ""), manifest)
    out = {"modules": {}, "fetched": {}}
    for name, base in (("pyscript", pyscript_dir), ("pyodide", pyodide_dir)):
        art = manifest.artifact(name)
        if not art.files_sha256:
            raise BuildError("artifacts.json pins no files_sha256 for %s, which a CDN build "
                             "checks the CDN's files against" % art.spec,
                             "pin it (a build of the PyScript host says its value)")
        _, files = cache.unpacked(art)
        for rel, record in sorted(files.items()):
            if name == "pyscript" and rel.endswith(".js"):
                digest = base64.b64encode(bytes.fromhex(record["sha256"])).decode("ascii")
                out["modules"][base + rel] = "sha256-" + digest
            elif name == "pyodide" and rel in CDN_FETCHED:
                out["fetched"][base + rel] = record["sha256"]
    return out


def import_map(integrity):
    """The CDN build's import map: only ``integrity``, the pinned hash of each of PyScript's
    modules, which the browser checks whenever the page imports one (core.js, and the chunks it
    imports in turn), by the import map's URL, or refuses it."""
    return json.dumps({"integrity": integrity["modules"]}, sort_keys=True, separators=(",", ":"))


def runtime_tags(host, manifest, sizes=None, integrity=None, pyscript_modules=()):
    """The HTML that replaces <!--RUNTIME--> in index.html.

    host.js is a plain script before this line, so vitHost always exists.

    fallback: Python runs in a Web Worker that boot/fallback.js starts as soon as the parser
    reaches it, so Pyodide downloads and compiles off the main thread while Plotly.js and KaTeX
    load on it. (No preloads: a worker's fetches cannot use the page's preload cache.) `sizes`
    ({file name: bytes} of FALLBACK_COUNTED_FILES) lets the worker show progress by bytes.

    pyscript, cdn: Python runs in a PyScript worker that boot/pyscript.js (a module, so it runs
    once the page is parsed) starts with PyScript's PyWorker; the page calls it with
    `sync.dispatch`, which needs no special HTTP headers. The <py-config> and <mpy-config>
    switch off the PyScript plugins the page does not use, which saves loading their code
    (PyScript loads every plugin for a type of script that has no config). The modules of
    PyScript that the boot waits for (core.js and `pyscript_modules`, the names in PyScript's
    folder, of which those starting with PYSCRIPT_FIRST_MODULES) and the boot script's own import
    are preloaded. A CDN build (`integrity`: :func:`cdn_integrity`) first gives the browser the
    pinned hash of each of PyScript's modules (:func:`import_map`), and each preload carries its
    module's hash.
    """
    if host.name == "fallback":
        index = manifest.artifact("pyodide-0.17").dest + "/"
        downloads = json.dumps(sizes or {}, separators=(",", ":"), sort_keys=True)
        return ('<script src="boot/fallback.js" data-index-url="%s" data-python-dir="%s" '
                'data-downloads=\'%s\'></script>' % (index, PYTHON_DIR, downloads))
    core, _ = pyscript_urls(host, manifest)
    tags = []
    if host.name == "cdn":
        # Before every module script: the import map's integrity covers each import of
        # PyScript's modules; each modulepreload carries the same hash, for browsers that know
        # modulepreload's integrity but not the import map's.
        tags.append('<script type="importmap">%s</script>' % import_map(integrity))
        pyscript_modules = [url[len(core):] for url in integrity["modules"]]
    first = sorted(name for name in pyscript_modules
                   if name.startswith(PYSCRIPT_FIRST_MODULES) and name.endswith(".js"))
    if len(first) != len(PYSCRIPT_FIRST_MODULES):
        raise BuildError("PyScript's folder has %s where the boot expects one module starting "
                         "with each of %s" % (first or "none", ", ".join(PYSCRIPT_FIRST_MODULES)),
                         "pin a PyScript whose core.js loads them (buildtools/assembly/hosts.py)")
    for url in [core + "core.js"] + [core + name for name in first]:
        pinned = ' integrity="%s"' % integrity["modules"][url] if integrity else ""
        tags.append('<link rel="modulepreload" href="%s"%s>' % (url, pinned))
    plugins = '{"plugins": [%s]}' % ", ".join('"!%s"' % p for p in UNUSED_PYSCRIPT_PLUGINS)
    return "\n".join(tags + [
        '<link rel="modulepreload" href="boot/memory-idb.js">',
        '<py-config type="json" hidden>%s</py-config>' % plugins,
        '<mpy-config type="json" hidden>%s</mpy-config>' % plugins,
        '<script type="module" src="boot/pyscript.js" data-core="%score.js"></script>' % core,
    ])


# The fallback host's large downloads, counted by its worker for the progress bar.
FALLBACK_COUNTED_FILES = ("pyodide.asm.wasm", "pyodide.asm.data", "numpy.data")

# The downloads of a PyScript boot that the worker counts for its progress bar (the NumPy wheel
# is added when the build has one); pyodide.mjs and pyodide.asm.mjs are imported, not fetched.
COUNTED_RUNTIME_FILES = ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def zip_bytes(entries, compression=zipfile.ZIP_DEFLATED):
    """A zip (bytes) of `entries`, {name: bytes}, in name order and each with a fixed date: the
    same entries give the same zip."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        for name in sorted(entries):
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), entries[name],
                       compression)
    return out.getvalue()


def python_zip(site, python_files):
    """Write the explorer's Python files into the site's PYTHON_ZIP, deflated (:func:`zip_bytes`).

    Parameters
    ----------
    site : str
        The site's folder, which holds every file of `python_files` at its "url".
    python_files : list of dict
        {"url", "path"} each (py-files.json's, and the bytecode's): where the file is in the site,
        and where it goes under PYTHON_DIR.

    Returns
    -------
    dict
        {"url": PYTHON_ZIP, "bytes": its size}, for :func:`pyscript_config`.
    """
    entries = {}
    for f in python_files:
        with open(os.path.join(site, *f["url"].split("/")), "rb") as source:
            entries[f["path"]] = source.read()
    data = zip_bytes(entries)
    with open(os.path.join(site, *PYTHON_ZIP.split("/")), "wb") as target:
        target.write(data)
    return {"url": PYTHON_ZIP, "bytes": len(data)}


def pyscript_config(host, manifest, python_zip, sizes=None, numpy_bytecode=None,
                    stdlib_bytecode=None, integrity=None, gzipped=()):
    """PyScript's JSON config: the interpreter, the Python files, NumPy as a package.

    The interpreter is boot/pyodide-worker.mjs, which loads Pyodide 314 from vit.pyodide_index
    and reports the boot's progress (see that file). `packages_cache: "passthrough"` hands
    `packages` to Pyodide's own loader, which checks the wheel against pyodide-lock.json; no
    micropip is needed. `sync_main_only`: the worker never calls into the page. The "vit" key is
    ours. `python_zip` is :func:`python_zip`'s answer: PyScript unpacks it into PYTHON_DIR (a
    destination ending in "/*"). `sizes` maps a file name of COUNTED_RUNTIME_FILES (and the
    wheel's) to its bytes; a file without one is counted with the Content-Length its server
    sends. `numpy_bytecode` is
    buildtools/assembly/bytecode.py's zip of NumPy's bytecode ({"url", "site_packages", "bytes"}):
    PyScript unpacks it into site-packages (a destination ending in "/*") after installing NumPy's
    wheel and before running the page's Python, which then imports NumPy without compiling it.
    """
    _, index = pyscript_urls(host, manifest)
    pyodide = manifest.artifact("pyodide")
    wheel = manifest.numpy_wheel
    has_numpy = host.name == "cdn" or bool(host.numpy_wheel)
    sizes = sizes or {}
    names = list(COUNTED_RUNTIME_FILES) + ([wheel.file_name] if has_numpy else [])
    config = {
        "interpreter": "boot/pyodide-worker.mjs",
        "files": {"./" + python_zip["url"]: PYTHON_DIR + "/*"},
        "packages_cache": "passthrough",
        "sync_main_only": True,
        "plugins": ["!" + p for p in UNUSED_PYSCRIPT_PLUGINS],
        "vit": {
            "python_dir": PYTHON_DIR,
            "pyodide": pyodide.version,
            "python": pyodide.extra.get("python"),
            "pyodide_index": index,
            "numpy": wheel.version if has_numpy else None,
            "numpy_wheel": {"file": wheel.file_name, "version": wheel.version,
                            "sha256": wheel.sha256} if has_numpy else None,
            "downloads": [{"url": index + name, "bytes": sizes.get(name)} for name in names]
                         + [dict(python_zip)],
            "no_numpy_message": NO_NUMPY_MESSAGE.format(major=pyodide.version.split(".")[0]),
        },
    }
    if has_numpy:
        config["packages"] = ["numpy"]
    if has_numpy and numpy_bytecode:
        config["files"]["./" + numpy_bytecode["url"]] = numpy_bytecode["site_packages"] + "/*"
        config["vit"]["downloads"].append({"url": numpy_bytecode["url"],
                                           "bytes": numpy_bytecode.get("bytes")})
    if integrity:  # a CDN build: the worker checks what Pyodide's loader fetches from the CDN
        config["vit"]["integrity"] = dict(integrity["fetched"])
    if gzipped:  # served as <url>.gz, decompressed in the worker (buildtools/assembly/gzipped.py)
        config["vit"]["gzipped"] = list(gzipped)
    if stdlib_bytecode:  # the worker hands it to loadPyodide in place of Pyodide's own
        config["vit"]["stdlib"] = stdlib_bytecode["url"]
        for download in config["vit"]["downloads"]:
            if download["url"] == index + "python_stdlib.zip":
                download.update(url=stdlib_bytecode["url"], bytes=stdlib_bytecode.get("bytes"))
    return config
