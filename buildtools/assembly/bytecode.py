"""Bytecode for the PyScript host's Python, compiled at build time by the site's own Pyodide.

Pyodide 314 ships no .pyc files, neither for its standard library nor in NumPy's wheel, so the
worker compiled every module it imported from source on each boot: the explorer's (0.16-0.26 s
of a PyScript boot, against 0.04-0.05 s with the files compiled) and NumPy's (`import numpy`
0.67-0.69 s from source, 0.28-0.31 s with its modules compiled, in Node.js on one core). The
build compiles both with the vendored Pyodide under Node.js (buildtools/assembly/bytecode.mjs),
which gives the exact bytecode of the page's Python (3.14 here; no CPython 3.14 is needed). NumPy's
wheel stays as pinned (pyodide-lock.json's sha256 checks it); its bytecode is a separate zip,
unpacked into site-packages before `import numpy`. Without Node.js, or if it fails, the site is
built without them and the worker compiles as before.
"""
import collections
import json
import shutil
import subprocess

NODE_TIMEOUT_S = 180

# What compile_site made: the explorer's .pyc files ({"url", "path"} each) and NumPy's zip
# ({"url", "modules", "site_packages": where Python finds NumPy}, or None).
Bytecode = collections.namedtuple("Bytecode", "files numpy stdlib")
NOTHING = Bytecode([], None, None)
# Modules the page's worker imports that the boot replayed under Node.js does not: PyScript's own
# Python (pyscript.display) imports html, whose html.entities is a large table to compile; and
# Python's warm-up (web/py/bridge.py, MENU_DRILL) imports numpy.random, as a visit's first "last
# position" mistake or MLP head would (its modules, and the standard library's it imports).
ALSO = ["html", "numpy.random"]


def compile_site(site, files, pyodide_dir, numpy_wheel=None, numpy_zip=None, stdlib_zip=None,
                 entry="bridge", log=print):
    """Write a checked-hash .pyc beside each Python source of `files` in `site` and, given NumPy's
    wheel, a zip of the bytecode of every NumPy module that importing NumPy and `entry` imports.

    Parameters
    ----------
    site : str
        The site being built; the sources are in it already.
    files : list of dict
        py-files.json's entries ({"url", "path"}); those whose url ends in .py are compiled.
    pyodide_dir : str
        The site's Pyodide folder (pyodide.mjs and its runtime files).
    numpy_wheel : str, optional
        Path of NumPy's wheel for that Pyodide; without it NumPy is left alone.
    numpy_zip : str, optional
        Where the zip goes, relative to the site (needed with `numpy_wheel`).
    entry : str
        The module the page's worker imports first (web/py/bridge.py).

    Returns
    -------
    Bytecode
        `files`: {"url", "path"} of each .pyc written (url in the site, path as Python imports
        it); `numpy`: {"url", "modules", "site_packages"} of the zip, or None. NOTHING, with the
        reason logged, when they could not be made.

    Examples
    --------
    >>> made = compile_site("dist", files, "dist/vendor/pyodide")   # doctest: +SKIP
    >>> made.files[0]                                               # doctest: +SKIP
    {'url': 'pycore/__pycache__/__init__.cpython-314.pyc', 'path': 'pycore/__pycache__/...'}
    """
    sources = [[f["url"], f["path"]] for f in files if f["url"].endswith(".py")]
    request = {"sources": sources, "boot": None}
    if numpy_wheel:
        request["boot"] = {"wheel": numpy_wheel, "entry": entry, "also": ALSO,
                           "numpy_zip": numpy_zip, "stdlib_zip": stdlib_zip}
    node = shutil.which("node")
    if not node:
        log("bytecode: Node.js not found; the page's Python compiles its modules as it boots")
        return NOTHING
    script = __file__[:-len(".py")] + ".mjs"
    try:
        done = subprocess.run([node, script, pyodide_dir, site], input=json.dumps(request),
                              capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log("bytecode: not compiled (%s); the page's Python compiles its modules as it boots" % exc)
        return NOTHING
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        why = next((line.strip() for line in lines if "Error" in line),
                   "exit status %d" % done.returncode)
        log("bytecode: not compiled (%s); the page's Python compiles its modules as it boots" % why)
        return NOTHING
    out = json.loads(done.stdout)
    written = [{"url": url, "path": path} for url, path in out["files"]]
    numpy = out["numpy"] and {"url": out["numpy"]["zip"], "modules": out["numpy"]["modules"],
                              "site_packages": out["numpy"]["site_packages"]}
    stdlib = out["stdlib"] and {"url": out["stdlib"]["zip"], "modules": out["stdlib"]["modules"],
                                "file": out["stdlib"]["file"]}
    log("bytecode: %d Python modules compiled with the site's Pyodide%s" % (
        len(written), ", %d of NumPy's (%s) and %d of the standard library's (%s)" % (
            numpy["modules"], numpy["url"], stdlib["modules"], stdlib["url"]) if numpy else ""))
    return Bytecode(written, numpy, stdlib)
