"""The browser-side Python: one explorer session, reachable from the page's JavaScript.

Deliberately thin: all decisions live in pycore.explorer.session (tested in CPython). This module
turns JSON text into requests and answers back into JSON text, and lends the page the NumPy
arrays each answer names (pycore.explorer.protocol.matrix_names). It never raises: a bug becomes
an answer that says so, and the page stays alive.
"""
import json
import os
import traceback

from pycore.explorer import class_names
from pycore.explorer.protocol import matrix_names
from pycore.explorer.session import Session

# The ViT-B/16 preset's ImageNet-1k class names, which the build wrote beside this file (when
# it could: else the classes stay numbered).
class_names.load_imagenet(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                       class_names.FILE_NAME))
_session = Session()
_last = []  # the matrix names of the last answer


def _internal_error(err):
    traceback.print_exc()
    return {"ok": False, "error": {"message": "Internal error in the explorer: %s" % err,
                                   "key": None, "index": None}}


def _handle(request_json):
    """(JSON text of the answer, the names of the matrices it carries)."""
    try:
        answer = _session.handle(json.loads(request_json))
        return json.dumps(answer, allow_nan=False), matrix_names(answer)
    except Exception as err:  # a bug, not a refused input: say so, and keep the page alive
        return json.dumps(_internal_error(err)), []


def dispatch(request_json):
    """Answer one JSON request with JSON text (the fallback host then reads its matrices with
    last_matrix_names() and matrix())."""
    text, names = _handle(request_json)
    _last[:] = names
    return text


def last_matrix_names():
    """The names of the matrices the last answer carries, as JSON text (a string crosses into
    JavaScript the same way in Pyodide 0.17 and 314)."""
    return json.dumps(_last)


def matrix(key):
    """The float64, C-contiguous 2-D array named `key` in the last answer."""
    return _session.matrix(key)


def answer(request_json):
    """(JSON text of the answer, {name: array} of every matrix it carries)."""
    text, names = _handle(request_json)
    return text, {name: _session.matrix(name) for name in names}
