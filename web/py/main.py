"""The PyScript host's entry: load NumPy, then hand web/py/bridge.py to the page.

PyScript (config: pyscript.json, written by build.py) has started Pyodide 314 from the site's
own vendor/ folder and written the Python files of py-files.json under PYTHON_DIR. NumPy is
loaded here with pyodide_js.loadPackage, from the interpreter's folder, because PyScript's
`packages` needs micropip, which the npm build of Pyodide does not ship.
"""
import sys
import traceback

import js
import pyodide_js
from pyodide.ffi import create_proxy
from pyscript import config

VIT = config.get("vit", {})
PYTHON_DIR = VIT.get("python_dir", "/home/pyodide/explorer")
NO_NUMPY = VIT.get("no_numpy_message") or (
    "This build has no NumPy for Pyodide 314: rebuild with --numpy-wheel or use the "
    "fallback host")


async def boot(host):
    js.document.documentElement.dataset.pyodide = str(pyodide_js.version)
    if not VIT.get("numpy"):
        host.fail(NO_NUMPY)  # build.py could not vendor the wheel: say so, fetch nothing
        return
    host.status("numpy", "Loading NumPy %s…" % VIT.get("numpy"))
    try:
        await pyodide_js.loadPackage("numpy")
        import numpy  # noqa: F401  (fails here, not later in bridge, if the wheel was bad)
    except Exception as exc:
        js.console.error(traceback.format_exc())
        last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        host.fail("NumPy could not be loaded (%s). %s" % (last, NO_NUMPY))
        return
    host.status("explorer", "Loading the explorer…")
    if PYTHON_DIR not in sys.path:
        sys.path.insert(0, PYTHON_DIR)
    try:
        import bridge
    except Exception as exc:
        js.console.error(traceback.format_exc())
        host.fail("The explorer's Python code could not be loaded (%s: %s)."
                  % (type(exc).__name__, exc))
        return
    host.ready(create_proxy(bridge))


await boot(js.vitHost)  # noqa: F704  (PyScript runs this file with top-level await)
