"""The PyScript host's Python, in PyScript's worker: hands web/py/bridge.py to the page.

PyScript (config: pyscript.json, written by build.py) has started Pyodide 314 in a Web Worker,
loaded NumPy (its `packages`, checked against the sha256 in pyodide-lock.json) and written the
Python files into the explorer's folder, which boot/pyodide-worker.mjs put on sys.path (the boot
kit's pythonPath, js/host.js, as in the other hosts' workers). This file exposes two functions
to the page through `pyscript.sync`: the page awaits `sync.dispatch(request_json)`, which needs
no SharedArrayBuffer, so no special HTTP headers (calls from the worker into the page would;
the explorer makes none), and `sync.warm_up(edits)`.
"""
import json
import time

import js
from pyodide.ffi import to_js
from pyscript import sync


def tell(**message):
    """Boot progress for the page (boot/pyscript.js), as boot/pyodide-worker.mjs sends it."""
    js.postMessage(to_js({"vitBoot": message}, dict_converter=js.Object.fromEntries))


def boot():
    tell(stage="explorer", text="Loading the explorer…")
    try:
        import numpy  # noqa: F401  (loaded by PyScript; fails here if it could not be)
    except ImportError as exc:
        tell(fail="NumPy could not be loaded (%s)." % exc)
        raise
    try:
        import bridge
    except Exception as exc:
        tell(fail="The explorer's Python code could not be loaded (%s: %s)."
                  % (type(exc).__name__, exc))
        raise
    return bridge


_bridge = boot()
import numpy  # noqa: E402  (boot() has imported it, or said why it could not)


SHARED_MAX = 4096
"""Matrices of at most this many values cross to the page in one shared Float64Array (the page
copies each out), larger ones in one of their own: every call across Pyodide's bridge has a
cost of its own, and a matrix crossing alone takes seven (a CLS edit's answer carries three:
h_hat, logits, probs)."""


def dispatch(request_json, practice=False):
    """One request in; out, a JS object {text: the JSON answer, shapes: JSON [[name, rows, cols,
    where], ...] of every matrix the answer names, small: Float64Array, large: {name:
    Float64Array}, worker_ms}. `where` is the offset of a small matrix's values in `small`, or
    null for a large one (boot/pyscript.js reads them back as {rows, cols, data}). `practice`:
    a warm-up's request, answered in a session of its own (bridge.warm_up)."""
    t0 = time.perf_counter()
    text, arrays = _bridge.answer(request_json, practice)
    shapes, small, offset = [], [], 0
    large = js.Object.new()
    for key, m in arrays.items():  # float64, C-contiguous, 2-D (bridge.answer)
        if m.size <= SHARED_MAX:
            shapes.append([key, m.shape[0], m.shape[1], offset])
            small.append(m.reshape(-1))
            offset += m.size
        else:
            shapes.append([key, m.shape[0], m.shape[1], None])
            data = js.Float64Array.new(m.size)
            data.assign(m)
            setattr(large, key, data)
    out = js.Object.new()
    out.small = js.Float64Array.new(offset)
    if small:
        out.small.assign(numpy.concatenate(small))
    out.text, out.shapes, out.large = text, json.dumps(shapes), large
    out.worker_ms = (time.perf_counter() - t0) * 1000.0
    return out


def warm_up(edits):
    """Answer `edits` practice edits, each crossing as dispatch makes the page's own cross
    (bridge.warm_up); returns the milliseconds they took."""
    return _bridge.warm_up(edits, lambda request_json: dispatch(request_json, practice=True))


sync.dispatch = dispatch
sync.warm_up = warm_up
