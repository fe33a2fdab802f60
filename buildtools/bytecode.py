"""Bytecode for the PyScript host's Python, compiled at build time by the site's own Pyodide.

Pyodide 314 ships no .pyc files, so the worker compiled every explorer module from source on
each boot (0.16-0.26 s of a PyScript boot, against 0.04-0.05 s with the files compiled). The
build compiles them with the vendored Pyodide under Node.js (buildtools/bytecode.mjs), which
gives the exact bytecode of the page's Python (3.14 here; no CPython 3.14 is needed). Without
Node.js, or if it fails, the site is built without them and the worker compiles as before.
"""
import json
import shutil
import subprocess

NODE_TIMEOUT_S = 180


def compile_files(site, files, pyodide_dir, log=print):
    """Write a checked-hash .pyc beside each Python source of `files` in `site`.

    Parameters
    ----------
    site : str
        The site being built; the sources are in it already.
    files : list of dict
        py-files.json's entries ({"url", "path"}); those whose url ends in .py are compiled.
    pyodide_dir : str
        The site's Pyodide folder (pyodide.mjs and its runtime files).

    Returns
    -------
    list of dict
        {"url", "path"} of each .pyc written (url in the site, path as Python imports it), or
        an empty list, with the reason logged, when they could not be made.
    """
    sources = [[f["url"], f["path"]] for f in files if f["url"].endswith(".py")]
    node = shutil.which("node")
    if not node:
        log("bytecode: Node.js not found; the page's Python compiles its modules as it boots")
        return []
    script = __file__[:-len(".py")] + ".mjs"
    try:
        done = subprocess.run([node, script, pyodide_dir, site], input=json.dumps(sources),
                              capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log("bytecode: not compiled (%s); the page's Python compiles its modules as it boots" % exc)
        return []
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        why = next((line.strip() for line in lines if "Error" in line), "exit status %d" % done.returncode)
        log("bytecode: not compiled (%s); the page's Python compiles its modules as it boots" % why)
        return []
    written = [{"url": url, "path": path} for url, path in json.loads(done.stdout)]
    log("bytecode: %d Python modules compiled with the site's Pyodide" % len(written))
    return written
