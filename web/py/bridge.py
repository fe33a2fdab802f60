"""The browser-side Python: one explorer session, reachable from the page's JavaScript.

Deliberately thin: all decisions live in pycore.explorer.session (tested in CPython). This module only
turns JSON text into requests and answers back into JSON text, and lends the page NumPy arrays
to read as buffers.
"""
import json
import traceback

from pycore.explorer.session import Session

_session = Session()


def _handle(request_json):
    try:
        return _session.handle(json.loads(request_json))
    except Exception as err:  # a bug, not a refused input: say so, and keep the page alive
        traceback.print_exc()
        return {"ok": False, "error": {"message": "Internal error in the explorer: %s" % err,
                                       "key": None, "index": None}}


def dispatch(request_json):
    """Answer one JSON request with JSON text; a bug becomes an answer too, never a dead page."""
    return json.dumps(_handle(request_json), allow_nan=False)


def matrix(key):
    """The float64, C-contiguous 2-D array named `key` in the last answer."""
    return _session.matrix(key)


def answer(request_json):
    """(JSON text of the answer, {key: array} of every matrix it names)."""
    res = _handle(request_json)
    keys = set()
    for section in ("heatmaps", "grids"):
        for spec in (res.get(section) or {}).values():
            keys.add(spec["matrix"])
    return json.dumps(res, allow_nan=False), {key: _session.matrix(key) for key in sorted(keys)}
